# SPDX-License-Identifier: Apache-2.0
"""The Helm chart (ctest entry `helm`, label `kubernetes`) that
deploy/helm/make-chart.py renders from the kustomize bundle, checked with the
pinned helm that .ci/install-deps builds from its Go module:

* `helm lint --strict`, with TLS and the node feature file each off and on;
* `helm template` with the default values gives exactly what `kubectl
  kustomize` gives for `make-bundle.py --image` (the chart adds only its own
  metadata labels and the release namespace); with tls.enabled, what the
  deploy/kubernetes-tls overlay gives; with nodeFeatures.enabled, what the
  deploy/kubernetes-nfd overlay gives;
* the values do what they say: image, resources, priority class,
  tolerations, the configuration, the TLS Secrets' names, the PodMonitor,
  PrometheusRule and dashboards switched off or labelled; an unset image
  repository fails with a message naming it;
The rendered objects are not validated again: they are the bundle's, which
test_kubernetes.py validates strictly.
"""
import copy
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from deploy_env import require, tools_dir, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
HELM_VERSION = "v3.22.0"  # .ci/build-helm
IMAGE = "registry.example.com/numaprobe"
TAG = "1.2.3-dev.4"
NAMESPACE = "monitoring"
# Labels the chart adds to every object's metadata (Helm's conventions).
HELM_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance",
               "app.kubernetes.io/version"}


@pytest.fixture(scope="module")
def helm():
    path = os.environ.get("NUMAPROBE_HELM") or str(pathlib.Path(tools_dir()) / f"helm-{HELM_VERSION}" / "helm")
    if not os.access(path, os.X_OK):
        unavailable(f"{path} missing: .ci/install-deps builds helm {HELM_VERSION} (.ci/build-helm)")
    return path


@pytest.fixture(scope="module")
def chart(tmp_path_factory):
    out = tmp_path_factory.mktemp("chart")
    p = subprocess.run([sys.executable, str(ROOT / "deploy/helm/make-chart.py"), "--image", f"{IMAGE}:{TAG}",
                        str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return out / "numaprobe"


def run_helm(helm, *args):
    p = subprocess.run([helm, *args], capture_output=True, text=True, timeout=120)
    return p


def template(helm, chart, *values, files=()):
    args = ["template", "numaprobe", str(chart), "--namespace", NAMESPACE]
    for value in values:
        args += ["--set", value]
    for value in files:
        args += ["--set-file", value]
    p = run_helm(helm, *args)
    assert p.returncode == 0, p.stderr
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(p.stdout) if d}


def kustomize_bundle(tmp_path, tls=False, node_features=False):
    out = tmp_path / ("tls" if tls else "nfd" if node_features else "base")
    args = [sys.executable, str(ROOT / "deploy/kubernetes/make-bundle.py"), "--image", f"{IMAGE}:{TAG}", str(out)]
    args += (["--tls"] if tls else []) + (["--node-features"] if node_features else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    kubectl = require("kubectl")
    r = subprocess.run([kubectl, "kustomize", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    docs = {}
    for d in yaml.safe_load_all(r.stdout):
        if d:
            d["metadata"]["namespace"] = NAMESPACE  # kubectl apply -n monitoring
            docs[(d["kind"], d["metadata"]["name"])] = d
    return docs


def without_helm_labels(docs):
    """The chart's objects without what only a chart adds: its labels and the
    pod template's checksum of the ConfigMap."""
    docs = copy.deepcopy(docs)
    for d in docs.values():
        labels = d["metadata"].get("labels", {})
        assert HELM_LABELS <= set(labels), (d["kind"], labels)
        for key in HELM_LABELS:
            labels.pop(key)
        if d["kind"] == "DaemonSet":
            assert d["spec"]["template"]["metadata"]["annotations"].pop("checksum/config")
    return docs


def test_lint(helm, chart):
    for values in ([], ["--set", "tls.enabled=true"], ["--set", "nodeFeatures.enabled=true"],
                   ["--set", "tls.enabled=true", "--set", "nodeFeatures.enabled=true"]):
        p = run_helm(helm, "lint", "--strict", str(chart), *values)
        assert p.returncode == 0 and "0 chart(s) failed" in p.stdout, p.stdout + p.stderr


def test_the_chart_says_its_version(chart):
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert meta["version"] == meta["appVersion"] == TAG
    values = yaml.safe_load((chart / "values.yaml").read_text())
    assert values["image"]["repository"] == IMAGE and values["image"]["tag"] == ""


def test_default_values_render_what_kustomize_renders(helm, chart, tmp_path):
    rendered = template(helm, chart)
    expected = kustomize_bundle(tmp_path)
    assert set(rendered) == set(expected)
    assert without_helm_labels(rendered) == expected


def test_tls_renders_what_the_tls_overlay_renders(helm, chart, tmp_path):
    rendered = template(helm, chart, "tls.enabled=true")
    expected = kustomize_bundle(tmp_path, tls=True)
    assert set(rendered) == set(expected)
    assert without_helm_labels(rendered) == expected


def test_node_features_render_what_the_nfd_overlay_renders(helm, chart, tmp_path):
    rendered = template(helm, chart, "nodeFeatures.enabled=true")
    expected = kustomize_bundle(tmp_path, node_features=True)
    assert set(rendered) == set(expected)
    assert without_helm_labels(rendered) == expected


def test_values_reach_the_objects(helm, chart, tmp_path):
    config = tmp_path / "numaprobe.yaml"
    config.write_text("schedule:\n  interval: 7m\n")
    docs = template(helm, chart, "image.tag=9.9.9", "image.pullPolicy=Always", "resources.limits.memory=1Gi",
                    "priorityClassName=", "tolerations=null", "podMonitor.labels.release=kps",
                    "prometheusRule.labels.release=kps", "tls.enabled=true", "tls.serverName=np.example.org",
                    "tls.scrapeSecret=scrape", "tls.certificateSecret=cert", "tls.webConfigSecret=web",
                    files=[f"config={config}"])
    pod = docs[("DaemonSet", "numaprobe")]["spec"]["template"]["spec"]
    for c in pod["containers"] + pod["initContainers"]:
        assert c["image"] == f"{IMAGE}:9.9.9" and c["imagePullPolicy"] == "Always", c
    assert pod["containers"][0]["resources"]["limits"]["memory"] == "1Gi"
    assert "priorityClassName" not in pod and "tolerations" not in pod
    assert {v["name"]: v.get("secret", {}).get("secretName") for v in pod["volumes"]}["tls"] == "cert"
    assert {v["name"]: v.get("secret", {}).get("secretName") for v in pod["volumes"]}["web"] == "web"
    endpoint = docs[("PodMonitor", "numaprobe")]["spec"]["podMetricsEndpoints"][0]
    assert endpoint["tlsConfig"]["serverName"] == "np.example.org"
    assert endpoint["tlsConfig"]["ca"]["secret"]["name"] == "cert"
    assert endpoint["basicAuth"]["username"]["name"] == "scrape"
    assert docs[("PodMonitor", "numaprobe")]["metadata"]["labels"]["release"] == "kps"
    assert docs[("PrometheusRule", "numaprobe")]["metadata"]["labels"]["release"] == "kps"
    assert yaml.safe_load(docs[("ConfigMap", "numaprobe-config")]["data"]["numaprobe.yaml"]) == \
        {"schedule": {"interval": "7m"}}


def test_a_config_change_rolls_the_pods(helm, chart, tmp_path):
    """The pod template carries a checksum of the ConfigMap: the same values
    give the same pod template, another configuration (or the node feature
    file switched on, which adds a key) another one, so `helm upgrade` rolls
    the pods and the daemons read the new file."""
    def checksum(*values, files=()):
        docs = template(helm, chart, *values, files=files)
        return docs[("DaemonSet", "numaprobe")]["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    config = tmp_path / "numaprobe.yaml"
    config.write_text("schedule:\n  interval: 7m\n")
    default = checksum()
    assert re.fullmatch(r"[0-9a-f]{64}", default), default
    assert checksum() == default
    assert checksum("image.tag=9.9.9") == default, "only the configuration rolls the pods through it"
    assert checksum(files=[f"config={config}"]) != default
    assert checksum("nodeFeatures.enabled=true") != default


def test_image_pull_secrets_reach_the_pod(helm, chart):
    docs = template(helm, chart, "imagePullSecrets[0].name=regcred")
    assert docs[("DaemonSet", "numaprobe")]["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "regcred"}]


def test_parts_switch_off(helm, chart):
    docs = template(helm, chart, "podMonitor.enabled=false", "prometheusRule.enabled=false", "dashboards.enabled=false")
    assert sorted(docs) == [("ConfigMap", "numaprobe-config"), ("DaemonSet", "numaprobe")]


def test_an_unset_image_fails_naming_it(helm, chart):
    p = run_helm(helm, "template", "numaprobe", str(chart), "--set", "image.repository=")
    assert p.returncode != 0 and "image.repository" in p.stderr, p.stderr


def test_package(helm, chart, tmp_path):
    p = run_helm(helm, "package", str(chart), "--destination", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / f"numaprobe-{TAG}.tgz").is_file()


def test_a_release_chart_links_to_its_runbook(helm, chart, tmp_path):
    """A chart made for a release links its alerts to that release's runbook
    (the tag); a development build's chart (the fixture's) to main."""
    def runbook_urls(chart_dir):
        rule = template(helm, chart_dir)[("PrometheusRule", "numaprobe")]
        return [r["annotations"]["runbook_url"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]

    p = subprocess.run([sys.executable, str(ROOT / "deploy/helm/make-chart.py"), "--image", f"{IMAGE}:1.2.3",
                        str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    release = runbook_urls(tmp_path / "numaprobe")
    assert release and all("/blob/v1.2.3/docs/runbook.md#" in url for url in release), release
    dev = runbook_urls(chart)
    assert [url.replace("/blob/main/", "/blob/v1.2.3/") for url in dev] == release


def leaf_paths(values, prefix=""):
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from leaf_paths(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def test_the_readme_documents_every_value(helm, chart):
    """README.md (what `helm show readme` prints) has a described row for
    every value, with its default: each leaf has its own row, or a row of a
    mapping above it shown whole in values.yaml."""
    p = run_helm(helm, "show", "readme", str(chart))
    assert p.returncode == 0, p.stderr
    rows = {}
    for line in p.stdout.splitlines():
        m = re.fullmatch(r"\| `([A-Za-z.]+)` \| (.*?) \| (.*) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    assert rows and all(text.strip() for _, text in rows.values()), [k for k, (_, t) in rows.items() if not t.strip()]
    values = yaml.safe_load((chart / "values.yaml").read_text())
    for path, value in leaf_paths(values):
        row = next((rows[p] for p in (path, *[path.rsplit(".", n)[0] for n in range(1, path.count(".") + 1)])
                    if p in rows), None)
        assert row, f"{path}: no row in the README"
        if path in rows and row[0] != "(values.yaml)":
            assert json.loads(row[0].strip("`")) == value, (path, row[0], value)
