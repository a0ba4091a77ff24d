# SPDX-License-Identifier: Apache-2.0
"""The example NodeFeatureRule (deploy/kubernetes-nfd/nodefeaturerule.yaml)
checked with Node Feature Discovery's own code (ctest entry `nfd_rule`, label
`kubernetes`), with the pinned `kubectl-nfd` and `nfd` that
.ci/build-nfd-worker builds beside nfd-worker:

* `kubectl-nfd validate` accepts the rule, and rejects copies broken in ways it
  checks (a feature name that is not `<source>.<feature>`, a label value
  Kubernetes refuses);
* `kubectl-nfd dryrun` evaluates the rule against a NodeFeature made from what
  NFD itself reads from a numaprobe feature file, and the labels it prints are
  the ones the rule's comments promise: `remote-memory` near or far only once
  the drift alerts are armed, `slow-link-0-1` from the raw (`# +no-label`)
  distance feature. It fails on copies whose expressions NFD cannot evaluate
  (an unknown operator, `Gt` with a value that is not an integer), which
  `validate` does not check in v0.19.0 (it checks names, labels and templates,
  not expressions).

The NodeFeature's features are NFD's: `nfd export features` discovers with all
default sources once and prints the features as JSON, needing no cluster and
no kubeconfig (read in its v0.19.0 source, then tried). Like nfd-worker in
test_nfd_worker.py, it runs chrooted into a temporary root in a private mount
namespace, the file's directory bind-mounted at the local source's fixed
features.d. The sources that fail without their sysfs directory (pci, storage,
network) find empty ones in that root, so no host device is read; what else the
export holds (CPUID flags, the host name) the rule does not match on.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

from deploy_env import require, tools_dir, unavailable
from test_nfd_worker import FEATURES_D, NFD_VERSION, in_an_hour, rfc3339

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
RULE = ROOT / "deploy/kubernetes-nfd/nodefeaturerule.yaml"
# What pci, storage and network list; without the directory their discovery fails.
SYSFS_DIRS = ("sys/bus/pci/devices", "sys/block", "sys/class/net")


def tool(name):
    path = pathlib.Path(tools_dir()) / f"nfd-worker-{NFD_VERSION}" / name
    if not os.access(path, os.X_OK):
        unavailable(f"{path} missing: .ci/install-deps builds it with nfd-worker {NFD_VERSION} "
                    "(.ci/build-nfd-worker)")
    return str(path)


@pytest.fixture(scope="module")
def kubectl_nfd():
    return tool("kubectl-nfd")


@pytest.fixture(scope="module")
def nfd():
    return tool("nfd")


def feature_file(pct, armed, distance):
    """A feature file as numaprobe writes it (NodeFeatureFileText): labels,
    then the raw distance features each after `# +no-label`."""
    return "\n".join([
        "# Written by numaprobe",
        f"# +expiry-time={rfc3339(in_an_hour())}",
        "numaprobe.io/latency-local-ns=92",
        f"numaprobe.io/latency-remote-local-pct={pct}",
        f"numaprobe.io/drift-alerts-armed={'true' if armed else 'false'}",
        "# +no-label",
        "numaprobe.io/distance-0-0=10",
        "# +no-label",
        f"numaprobe.io/distance-0-1={distance}",
        "",
    ])


def export_features(nfd, text, tmp_path):
    """`nfd export features` on a features.d holding `text` as `numaprobe`:
    the features NFD discovered, as it prints them."""
    root = tmp_path / "nfd-root"
    shutil.rmtree(root, ignore_errors=True)
    for d in (FEATURES_D, *SYSFS_DIRS):
        (root / d).mkdir(parents=True)
    (root / "nfd").touch()
    features = tmp_path / "features.d"
    shutil.rmtree(features, ignore_errors=True)
    features.mkdir()
    (features / "numaprobe").write_text(text)
    unshare = [require("unshare"), "--mount"] + ([] if os.geteuid() == 0 else ["--user", "--map-root-user"])
    # sh -c SCRIPT ROOT NFD FEATURES FEATURES_D: $0 is the new root.
    script = ('mount --bind "$1" "$0/nfd" && mount --bind "$2" "$0/$3" && '
              'exec chroot "$0" /nfd export features')
    argv = [*unshare, "sh", "-c", script, str(root), nfd, str(features), FEATURES_D]
    env = {**os.environ, "PATH": os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def node_feature(features, path):
    """A NodeFeature object holding `features`, as nfd-worker would publish it."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "nfd.k8s-sigs.io/v1alpha1",
        "kind": "NodeFeature",
        "metadata": {"name": "numaprobe-test", "labels": {"nfd.node.kubernetes.io/node-name": "numaprobe-test"}},
        "spec": {"features": features},
    }))
    return path


def validate(kubectl_nfd, rule):
    p = subprocess.run([kubectl_nfd, "validate", "-f", str(rule)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def dryrun(kubectl_nfd, rule, nf):
    """(exit code, labels the rule would set, output). dryrun prints
    `***\\tLabels\\t***` and then one `name=value` line per label, in no fixed
    order, up to the next `***` section or the closing verdict; label values
    Kubernetes refuses follow `\\t-Validation errors-` with exit code 0."""
    p = subprocess.run([kubectl_nfd, "dryrun", "-f", str(rule), "-n", str(nf)], capture_output=True,
                       text=True, timeout=60)
    out = p.stdout + p.stderr
    labels, in_labels = {}, False
    for line in p.stdout.splitlines():
        if line.startswith("***"):
            in_labels = line == "***\tLabels\t***"
        elif line.startswith("NodeFeatureRule ") or line.startswith("\t-"):
            in_labels = False
        elif in_labels:
            name, sep, value = line.partition("=")
            assert sep and name not in labels, out
            labels[name] = value
    return p.returncode, labels, out


def test_validate_accepts_the_rule(kubectl_nfd):
    code, out = validate(kubectl_nfd, RULE)
    assert code == 0, out
    assert f"NodeFeatureRule {RULE} is valid" in out, out
    # Every rule was looked at.
    rules = yaml.safe_load(RULE.read_text())["spec"]["rules"]
    assert re.findall(r"^Validating rule:  (.*)$", out, re.M) == [r["name"] for r in rules]


@pytest.mark.parametrize("what,old,new", [
    pytest.param("a feature name that is not <source>.<feature>", "- feature: local.feature\n",
                 "- feature: local\n", id="feature-name"),
    pytest.param("a label value Kubernetes refuses", "numaprobe.io/remote-memory: far\n",
                 "numaprobe.io/remote-memory: very far\n", id="label-value"),
])
def test_validate_rejects_a_broken_copy(kubectl_nfd, tmp_path, what, old, new):
    text = RULE.read_text()
    assert text.count(old) == 1, old
    broken = tmp_path / "broken.yaml"
    broken.write_text(text.replace(old, new))
    code, out = validate(kubectl_nfd, broken)
    assert code == 1, f"{what}: {out}"
    assert f"NodeFeatureRule {broken} is not valid" in out, out


# (latency-remote-local-pct, drift-alerts-armed, distance-0-1) -> the labels the rule sets.
CASES = [
    (150, True, 30, {"numaprobe.io/remote-memory": "near", "numaprobe.io/slow-link-0-1": "true"}),
    (277, True, 15, {"numaprobe.io/remote-memory": "far"}),
    # The thresholds meet: no ratio falls between near and far.
    (199, True, 15, {"numaprobe.io/remote-memory": "near"}),
    (200, True, 25, {"numaprobe.io/remote-memory": "far"}),
    # Not armed: no class from a first round's figures; the link rule does not care.
    (150, False, 15, {}),
    (277, False, 30, {"numaprobe.io/slow-link-0-1": "true"}),
]


@pytest.mark.parametrize("pct,armed,distance,expected", CASES)
def test_dryrun_sets_the_documented_labels(kubectl_nfd, nfd, tmp_path, pct, armed, distance, expected):
    features = export_features(nfd, feature_file(pct, armed, distance), tmp_path)
    local = features["attributes"]
    # What the rule matches on is where NFD put it: labels in local.label, and
    # every line, the `# +no-label` distances too, in local.feature.
    assert local["local.label"]["elements"] == {
        "numaprobe.io/latency-local-ns": "92",
        "numaprobe.io/latency-remote-local-pct": str(pct),
        "numaprobe.io/drift-alerts-armed": str(armed).lower(),
    }
    assert local["local.feature"]["elements"] == {
        **local["local.label"]["elements"],
        "numaprobe.io/distance-0-0": "10",
        "numaprobe.io/distance-0-1": str(distance),
    }
    code, labels, out = dryrun(kubectl_nfd, RULE, node_feature(features, tmp_path / "nodefeature.yaml"))
    assert code == 0, out
    assert "-Validation errors-" not in out, out
    assert labels == expected, out


@pytest.mark.parametrize("what,old,new", [
    pytest.param("an unknown operator", '{op: Gt, value: ["25"]}', '{op: GreaterThan, value: ["25"]}',
                 id="unknown-op"),
    pytest.param("Gt with a value that is not an integer", '{op: Gt, value: ["25"]}', '{op: Gt, value: ["2.5"]}',
                 id="gt-not-integer"),
])
def test_dryrun_rejects_an_expression_nfd_cannot_evaluate(kubectl_nfd, nfd, tmp_path, what, old, new):
    """Broken in the slow-link rule, whose one expression is always
    evaluated: NFD stops at the first expression of a set that does not match,
    in map order, so a broken one beside another may go unread."""
    text = RULE.read_text()
    assert text.count(old) == 1, old
    broken = tmp_path / "broken.yaml"
    broken.write_text(text.replace(old, new))
    nf = node_feature(export_features(nfd, feature_file(150, True, 30), tmp_path), tmp_path / "nodefeature.yaml")
    code, _, out = dryrun(kubectl_nfd, broken, nf)
    assert code == 1, f"{what}: {out}"
    assert "failed to process rule: \"numaprobe slow link from node 0 to node 1\"" in out, out
