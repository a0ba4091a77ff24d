# SPDX-License-Identifier: Apache-2.0
"""The Kubernetes manifests, offline (ctest label `kubernetes`): the bundle that
deploy/kubernetes/make-bundle.py writes (base + PrometheusRule from
grafana/rules + one ConfigMap per dashboard) rendered by `kubectl kustomize`,
then validated strictly (unknown fields are errors, as with
`kubectl apply --validate=strict`):

* core objects with kubernetes-validate --strict (bundled OpenAPI schemas of
  the oldest and newest Kubernetes it knows);
* PodMonitor and PrometheusRule with crd_validate.py (schemas of the
  prometheus-operator CRDs from cloudcoil-models-prometheus-operator).

Both validators come from PyPI into the tools venv of .ci/install-deps
($NUMAPROBE_TOOLS_DIR, default ~/.cache/numaprobe-tools). Every validator is
shown to reject a mutated copy: a misspelt field and a wrong type each.
"""
import copy
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

from deploy_env import require, tools_dir, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
K8S = ROOT / "deploy" / "kubernetes"
HERE = pathlib.Path(__file__).resolve().parent
STATE_DIR = "/var/lib/numaprobe"
# Oldest and newest schema sets kubernetes-validate 1.37 bundles.
K8S_VERSIONS = ("1.25.0", "1.37.0")
# What make-bundle.py --image names (the base's `numaprobe` is a placeholder).
IMAGE = "registry.example.com/numaprobe:0.2.0"
# The runbook links of a bundle made for IMAGE, a release: that release's runbook.
RUNBOOK_AT_RELEASE = "/blob/v0.2.0/docs/runbook.md"
RUNBOOK_AT_MAIN = "/blob/main/docs/runbook.md"
# kubectl apply (client side) stores the object in an annotation of at most 256 KiB.
LAST_APPLIED_LIMIT = 262144


@pytest.fixture(scope="module")
def venv_python():
    python = pathlib.Path(tools_dir()) / "venv" / "bin" / "python"
    if not python.exists():
        unavailable(f"{python} missing: .ci/install-deps creates the tools venv")
    return str(python)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    r = subprocess.run([sys.executable, str(K8S / "make-bundle.py"), "--image", IMAGE, str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def kustomize(directory):
    kubectl = require("kubectl")
    r = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


@pytest.fixture(scope="module")
def rendered(bundle):
    return kustomize(bundle)


def find(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert found, f"no {kind} {name or ''} in {[(d['kind'], d['metadata']['name']) for d in docs]}"
    return found


def test_base_renders_alone():
    kinds = sorted(d["kind"] for d in kustomize(K8S))
    assert kinds == ["ConfigMap", "DaemonSet", "PodMonitor"]


def test_bundle_has_rule_and_dashboards(rendered):
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in rendered)
    dashboards = sorted((ROOT / "grafana" / "dashboards").glob("*.json"))
    expected = {("ConfigMap", "numaprobe-config"), ("DaemonSet", "numaprobe"), ("PodMonitor", "numaprobe"),
                ("PrometheusRule", "numaprobe")}
    expected |= {("ConfigMap", "numaprobe-dashboard-" + p.stem.removeprefix("numaprobe-")) for p in dashboards}
    assert set(kinds) == expected and len(kinds) == len(expected), kinds
    for path in dashboards:
        cm = find(rendered, "ConfigMap", "numaprobe-dashboard-" + path.stem.removeprefix("numaprobe-"))[0]
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert json.loads(at_main(cm["data"][path.name])) == json.loads(path.read_text())
        assert len(json.dumps(cm)) < LAST_APPLIED_LIMIT, f"{path.name}: too big for client-side kubectl apply"
    # The base ConfigMap is not a dashboard.
    assert "grafana_dashboard" not in find(rendered, "ConfigMap", "numaprobe-config")[0]["metadata"].get("labels", {})


def at_main(text):
    """The bundle's text with its runbook links where grafana/'s point."""
    return text.replace(RUNBOOK_AT_RELEASE, RUNBOOK_AT_MAIN)


def test_prometheusrule_is_grafana_rules(rendered):
    rule = find(rendered, "PrometheusRule", "numaprobe")[0]
    groups = []
    for path in (ROOT / "grafana" / "rules" / "recording.yaml", ROOT / "grafana" / "rules" / "alerts.yaml"):
        groups += yaml.safe_load(path.read_text())["groups"]
    assert yaml.safe_load(at_main(yaml.safe_dump(rule["spec"]["groups"]))) == groups


def runbook_links(docs):
    text = yaml.safe_dump_all(docs, width=1000)
    return text.count(RUNBOOK_AT_RELEASE), text.count(RUNBOOK_AT_MAIN)


def test_runbook_links_open_the_release_that_runs(rendered, tmp_path):
    """A release image's bundle links every alert and dashboard to that
    release's runbook (the tag, where the runbook is as it shipped); a
    development build's to main."""
    alerts = [r for g in find(rendered, "PrometheusRule", "numaprobe")[0]["spec"]["groups"] for r in g["rules"]
              if "alert" in r]
    assert alerts and all(RUNBOOK_AT_RELEASE in a["annotations"]["runbook_url"] for a in alerts), alerts
    at_release, at_main_ = runbook_links(rendered)
    assert at_release > len(alerts) and at_main_ == 0, (at_release, at_main_)  # the dashboards link too

    dev = tmp_path / "dev"
    r = subprocess.run([sys.executable, str(K8S / "make-bundle.py"), "--image",
                        "registry.example.com/numaprobe:0.3.0-dev.12", str(dev)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert runbook_links(kustomize(dev)) == (0, at_release)


def test_bundle_names_the_image_given(rendered):
    """make-bundle.py --image: the daemon and its init container pull it."""
    pod = find(rendered, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
    assert [c["image"] for c in pod["initContainers"] + pod["containers"]] == [IMAGE, IMAGE]


def test_make_bundle_needs_an_image(tmp_path):
    r = subprocess.run([sys.executable, str(K8S / "make-bundle.py"), str(tmp_path / "b")], capture_output=True,
                       text=True)
    assert r.returncode != 0 and "--image" in r.stderr, r.stderr


def test_state_volume_is_a_hostpath(rendered):
    """The baseline outlives pod re-creation and node reboots."""
    pod = find(rendered, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in pod["containers"][0]["volumeMounts"]}
    state = volumes[mounts[STATE_DIR]]
    assert state["hostPath"] == {"path": STATE_DIR, "type": "DirectoryOrCreate"}, state
    config = yaml.safe_load(find(rendered, "ConfigMap", "numaprobe-config")[0]["data"]["numaprobe.yaml"])
    assert config["state_directory"] == STATE_DIR


TLS_OVERLAY = ROOT / "deploy" / "kubernetes-tls"


@pytest.fixture(scope="module")
def tls_rendered():
    return kustomize(TLS_OVERLAY)


def test_tls_overlay_serves_and_scrapes_https_with_basic_auth(tls_rendered):
    """deploy/kubernetes-tls: the certificate from a Secret, the PodMonitor
    verifying it and sending basic auth (docs/security.md "TLS")."""
    endpoint = find(tls_rendered, "PodMonitor", "numaprobe")[0]["spec"]["podMetricsEndpoints"][0]
    assert endpoint["scheme"] == "https", endpoint
    assert endpoint["tlsConfig"]["ca"] == {"secret": {"name": "numaprobe-tls", "key": "ca.crt"}}, endpoint
    assert endpoint["tlsConfig"]["serverName"], endpoint
    assert endpoint["basicAuth"]["password"] == {"name": "numaprobe-scrape", "key": "password"}, endpoint
    # The overlay replaces the endpoint list: the instance relabelling must survive.
    assert endpoint["relabelings"][0]["targetLabel"] == "instance", endpoint
    pod = find(tls_rendered, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert "--web.config.file=/etc/numaprobe-web/web.yml" in container["args"], container["args"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    for path, secret in (("/etc/numaprobe-tls", "numaprobe-tls"), ("/etc/numaprobe-web", "numaprobe-web")):
        assert mounts[path]["readOnly"] is True
        assert volumes[mounts[path]["name"]]["secret"]["secretName"] == secret
    # Basic auth answers 401 to kubelet's unauthenticated httpGet: TCP probes.
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert set(container[probe]) & {"httpGet", "tcpSocket"} == {"tcpSocket"}, container[probe]


def test_tls_overlay_passes_strict_validation(venv_python, tls_rendered, tmp_path, crd_schemas):
    r = crd_validate(venv_python, tls_rendered, tmp_path, crd_schemas)
    assert r.returncode == 0 and "valid: PodMonitor/numaprobe" in r.stdout, r.stdout + r.stderr
    for version in K8S_VERSIONS:
        r = kubernetes_validate(venv_python, tls_rendered, tmp_path, version)
        assert r.returncode == 0, r.stdout + r.stderr


SCRAPE_EXAMPLE = ROOT / "deploy" / "prometheus" / "kubernetes-scrape.yml"


def test_the_scrape_example_without_the_operator_labels_as_the_podmonitor_does(rendered):
    """deploy/prometheus/kubernetes-scrape.yml keeps numaprobe's pods and their
    metrics port and labels the series as the PodMonitor does (job numaprobe,
    instance = node name), which the rules and dashboards select on. Structure
    only: no promtool here knows kubernetes_sd_configs (Debian 12's 2.42 is
    built without the Kubernetes discovery, the pinned Prometheus 3 promtool
    without any), so `promtool check config` cannot check it."""
    example = yaml.safe_load(SCRAPE_EXAMPLE.read_text())
    (job,) = example["scrape_configs"]
    assert job["job_name"] == "numaprobe"
    assert [sd["role"] for sd in job["kubernetes_sd_configs"]] == ["pod"]
    monitor = find(rendered, "PodMonitor", "numaprobe")[0]["spec"]
    assert monitor["selector"]["matchLabels"] == {"app.kubernetes.io/name": "numaprobe"}
    keep = {(tuple(r["source_labels"]), r["regex"]) for r in job["relabel_configs"] if r["action"] == "keep"}
    assert keep == {(("__meta_kubernetes_pod_label_app_kubernetes_io_name",), "numaprobe"),
                    (("__meta_kubernetes_pod_container_port_name",), monitor["podMetricsEndpoints"][0]["port"])}
    (instance,) = monitor["podMetricsEndpoints"][0]["relabelings"]
    assert {"source_labels": instance["sourceLabels"], "target_label": instance["targetLabel"],
            "action": instance["action"]} in job["relabel_configs"]
    assert monitor["podMetricsEndpoints"][0]["path"] == job.get("metrics_path", "/metrics")


NFD_OVERLAY = ROOT / "deploy" / "kubernetes-nfd"
FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"


@pytest.fixture(scope="module")
def nfd_rendered():
    return kustomize(NFD_OVERLAY)


def test_nfd_overlay_gives_the_daemon_nfds_feature_directory(nfd_rendered):
    """deploy/kubernetes-nfd: NFD's feature directory of the node, mounted where
    the configuration's node_feature_directory says, made writable for the
    daemon's group by an init container; nothing else of the base changes."""
    base = kustomize(K8S)
    pod = find(nfd_rendered, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
    config = yaml.safe_load(find(nfd_rendered, "ConfigMap", "numaprobe-config")[0]["data"]["numaprobe.yaml"])
    assert config["node_feature_directory"] == FEATURES_DIR
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    features = mounts[FEATURES_DIR]
    assert not features.get("readOnly"), features
    assert volumes[features["name"]]["hostPath"] == {"path": FEATURES_DIR, "type": "DirectoryOrCreate"}
    init = {c["name"]: c for c in pod["initContainers"]}["features-group"]
    assert init["command"] == ["/usr/bin/install", "-d", "-g", "65534", "-m", "0775", FEATURES_DIR], init
    assert {m["mountPath"]: m["name"] for m in init["volumeMounts"]} == {FEATURES_DIR: features["name"]}
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN", "FOWNER"]}
    assert pod["securityContext"]["runAsGroup"] == 65534, "the daemon writes as the group the init container gives"
    # The ConfigMap repeats the base's text: the same configuration but for the key.
    base_config = yaml.safe_load(find(base, "ConfigMap", "numaprobe-config")[0]["data"]["numaprobe.yaml"])
    assert {k: v for k, v in config.items() if k != "node_feature_directory"} == base_config
    # The rest of the DaemonSet is the base's.
    base_pod = find(base, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
    strip = lambda p: {k: v for k, v in p.items() if k not in ("volumes", "initContainers", "containers")}  # noqa: E731
    assert strip(pod) == strip(base_pod)
    assert [v for v in pod["volumes"] if v["name"] != features["name"]] == base_pod["volumes"]


def test_nfd_overlay_passes_strict_validation(venv_python, nfd_rendered, tmp_path):
    for version in K8S_VERSIONS:
        r = kubernetes_validate(venv_python, nfd_rendered, tmp_path, version)
        assert r.returncode == 0, r.stdout + r.stderr


# --- schema validation ------------------------------------------------------------------

def kubernetes_validate(venv_python, docs, tmp_path, version):
    path = tmp_path / f"manifests-{version}.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return subprocess.run([venv_python, "-m", "kubernetes_validate", "--strict", "-k", version, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def crd_schemas(venv_python, tmp_path_factory):
    """The closed CRD schemas, generated once (importing the models is slow)."""
    path = tmp_path_factory.mktemp("crd") / "schemas.json"
    r = subprocess.run([venv_python, str(HERE / "crd_validate.py"), "--dump-schemas", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return path


def crd_validate(venv_python, docs, tmp_path, schemas):
    path = tmp_path / "manifests-crd.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return subprocess.run([venv_python, str(HERE / "crd_validate.py"), "--schemas", str(schemas), str(path)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_core_objects_pass_strict_openapi_validation(venv_python, rendered, tmp_path, version):
    r = kubernetes_validate(venv_python, rendered, tmp_path, version)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    short = ".".join(version.split(".")[:2])
    for kind, name in (("configmap", "numaprobe-config"), ("daemonset", "numaprobe")):
        assert f"passed for resource {kind}/{name} against version {short}" in out, out


def test_operator_objects_pass_strict_crd_validation(venv_python, rendered, tmp_path, crd_schemas):
    r = crd_validate(venv_python, rendered, tmp_path, crd_schemas)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "valid: PodMonitor/numaprobe" in r.stdout and "valid: PrometheusRule/numaprobe" in r.stdout


def _at(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc, path[-1]


def rename(path, new):
    def apply(doc):
        parent, key = _at(doc, path)
        parent[new] = parent.pop(key)
    return apply


def set_to(path, value):
    def apply(doc):
        parent, key = _at(doc, path)
        parent[key] = value
    return apply


CTR = ["spec", "template", "spec", "containers", 0]
POD = ["spec", "template", "spec"]
# (validator, kind, mutation, text the validator must print)
MUTATIONS = {
    "daemonset-misspelt-field": ("openapi", "DaemonSet", rename(CTR + ["securityContext", "readOnlyRootFilesystem"],
                                                                "readOnlyRootFilesytem"), "readOnlyRootFilesytem"),
    "daemonset-wrong-type": ("openapi", "DaemonSet", set_to(CTR + ["startupProbe", "periodSeconds"], "5"),
                             "periodSeconds"),
    "daemonset-misspelt-hostpath": ("openapi", "DaemonSet", rename(POD + ["volumes", 1, "hostPath", "type"], "tpye"),
                                    "tpye"),
    "configmap-wrong-type": ("openapi", "ConfigMap", set_to(["data"], ["numaprobe.yaml"]), "data"),
    "podmonitor-misspelt-field": ("crd", "PodMonitor", rename(["spec", "podMetricsEndpoints", 0, "relabelings", 0,
                                                               "sourceLabels"], "sourceLabel"), "sourceLabel"),
    "podmonitor-wrong-type": ("crd", "PodMonitor", set_to(["spec", "podMetricsEndpoints", 0, "scheme"], 5), "scheme"),
    "podmonitor-bad-enum": ("crd", "PodMonitor", set_to(["spec", "podMetricsEndpoints", 0, "relabelings", 0,
                                                         "action"], "rename"), "action"),
    "prometheusrule-misspelt-field": ("crd", "PrometheusRule", rename(["spec", "groups", 0, "rules", 0, "record"],
                                                                      "recrd"), "recrd"),
    "prometheusrule-wrong-type": ("crd", "PrometheusRule", set_to(["spec", "groups", 0, "rules"], {"record": "x"}),
                                  "rules"),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_a_mutated_copy_fails_validation(case, venv_python, rendered, tmp_path, crd_schemas):
    validator, kind, mutate, needle = MUTATIONS[case]
    docs = copy.deepcopy(rendered)
    target = [d for d in docs if d["kind"] == kind][0]
    if case == "daemonset-misspelt-hostpath":
        assert "hostPath" in target["spec"]["template"]["spec"]["volumes"][1], "volume 1 is no longer the state"
    mutate(target)
    if validator == "openapi":
        r = kubernetes_validate(venv_python, docs, tmp_path, K8S_VERSIONS[-1])
    else:
        r = crd_validate(venv_python, docs, tmp_path, crd_schemas)
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"{case}: the validator accepted the mutated copy:\n{out}"
    assert needle in out, out


def test_runbook_procedures_reach_the_daemonset_pods(rendered):
    """docs/runbook.md's Kubernetes commands (reload, baseline accept|reset in
    a chosen node's pod) against the rendered objects: the namespace the
    install uses, a label selector that selects the DaemonSet's pods and only
    by a label they have, a container that exists, the node-name field that
    the PodMonitor makes the `instance` label, and a bare `numaprobe ...` in
    the pod finds the DaemonSet's configuration (its --config.file is the
    commands' default and the ConfigMap is mounted there). The container test
    runs the same numaprobe commands in a container started as the DaemonSet
    starts it."""
    import runbook_procedures

    lines = runbook_procedures.procedures()["kubernetes"]
    kubectl_lines = [line for line in lines if "kubectl" in line]
    assert kubectl_lines, lines
    install = (ROOT / "deploy" / "README.md").read_text()
    ds = find(rendered, "DaemonSet", "numaprobe")[0]
    pod = ds["spec"]["template"]
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    argvs = []
    for line in kubectl_lines:
        words = line.replace("$(", "").replace(")", " ").split()
        namespace = words[words.index("-n") + 1]
        assert f"kubectl apply -n {namespace} -k" in install, f"{line}: deploy/README.md installs elsewhere"
        if "-l" in words:
            key, _, value = words[words.index("-l") + 1].partition("=")
            assert pod["metadata"]["labels"].get(key) == value, f"{line}: the pods have no label {key}={value}"
            assert ds["spec"]["selector"]["matchLabels"].get(key) == value, line
        if "--field-selector" in words:
            assert words[words.index("--field-selector") + 1].startswith("spec.nodeName="), line
        if "-c" in words:
            assert words[words.index("-c") + 1] in containers, f"{line}: no such container"
        if "rollout" in words:
            assert words[-1] == "daemonset/numaprobe", line
        argv = runbook_procedures.numaprobe_argv(line)
        if argv:
            argvs.append(argv)
    assert {tuple(a) for a in argvs} == {("numaprobe", "reload"), ("numaprobe", "baseline", "accept"),
                                         ("numaprobe", "baseline", "reset")}, argvs
    # The alert's instance is the node name the field selector takes.
    monitor = find(rendered, "PodMonitor", "numaprobe")[0]
    relabel = monitor["spec"]["podMetricsEndpoints"][0]["relabelings"]
    assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "instance",
            "action": "replace"} in relabel
    # Without flags the commands read /etc/numaprobe/numaprobe.yaml: the
    # daemon's own configuration in the pod.
    daemon = containers["numaprobe"]
    assert "--config.file=/etc/numaprobe/numaprobe.yaml" in daemon["args"]
    mount = next(m for m in daemon["volumeMounts"] if m["mountPath"] == "/etc/numaprobe")
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    config_map = find(rendered, "ConfigMap", volume["configMap"]["name"])[0]
    assert "numaprobe.yaml" in config_map["data"]


def test_the_site_overlay_keeps_its_configuration_across_upgrades(tmp_path):
    """deploy/kubernetes-site over a bundle (deploy/README.md, "Your
    configuration across upgrades"): the DaemonSet mounts the site's
    numaprobe.yaml, not the bundle's; an upgrade regenerates the bundle with
    a new image, and the site's file is still the one mounted."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "deploy" / "kubernetes-site", site)
    mine = (site / "numaprobe.yaml").read_text().replace("duty_cycle: 0.002", "duty_cycle: 0.001")
    assert mine != (site / "numaprobe.yaml").read_text()
    (site / "numaprobe.yaml").write_text(mine)
    for tag in ("0.2.0", "0.3.0"):
        r = subprocess.run([sys.executable, str(K8S / "make-bundle.py"), "--image",
                            f"registry.example.com/numaprobe:{tag}", str(tmp_path / "numaprobe-bundle")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        docs = kustomize(site)
        config = find(docs, "ConfigMap", "numaprobe-config")[0]
        assert config["data"] == {"numaprobe.yaml": mine}, config["data"]
        pod = find(docs, "DaemonSet", "numaprobe")[0]["spec"]["template"]["spec"]
        assert {"name": "config", "configMap": {"name": "numaprobe-config"}} in pod["volumes"]
        assert pod["containers"][0]["image"] == f"registry.example.com/numaprobe:{tag}"
    # Everything else is the bundle's: the rule and the dashboards come along.
    assert find(docs, "PrometheusRule", "numaprobe") and find(docs, "PodMonitor", "numaprobe")
