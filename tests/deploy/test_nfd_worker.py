# SPDX-License-Identifier: Apache-2.0
"""numaprobe's Node Feature Discovery feature file (`node_feature_directory`),
read by NFD's own worker (ctest entry `nfd_worker`, label `kubernetes`): the
pinned nfd-worker that .ci/build-nfd-worker builds from its Go module, with
only its `local` source, run once as a node would run it:

* the labels it would publish are the file's label lines with their values;
  a line after `# +no-label` is a raw feature (NodeFeatureRules see it), not
  a label;
* an expired file (`# +expiry-time` in the past) gives no labels and no
  features;
* a dot file, the name numaprobe writes before renaming it into place, is not
  read, beside the real file or alone;
* the real daemon's file (`serve` with `node_feature_directory` pointing at a
  temporary directory) gives exactly its label lines as labels.

How nfd-worker runs here without a cluster (read in its v0.19.0 source, then
tried): `-oneshot -no-publish` discovers once and publishes nothing (no
connection to the API server or nfd-master, no metrics port, no NODE_NAME
needed), `-feature-sources=local -label-sources=local` enables only the
feature-file source and `-config=` reads no worker config file. It still
builds a Kubernetes client at start, so it needs a kubeconfig (without one it
asks for the in-cluster service account and exits); any syntactically valid
one does, nothing connects to its server. `-v=3` logs the local source's
features and the labels, each as a YAML block. The features directory is fixed
(/etc/kubernetes/node-feature-discovery/features.d/, no flag), so the worker
runs chrooted into a temporary root in a private mount namespace (`unshare
--mount`), with the directory under test bind-mounted there: nothing on the
host is read or changed, and mounts end with the namespace.
"""
import datetime
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest
import yaml

from deploy_env import numaprobe_bin, require, tools_dir, unavailable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "integration"))
from daemon import SANITIZED_SLOWDOWN, Daemon, write_config  # noqa: E402

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
NFD_VERSION = "v0.19.0"  # .ci/build-nfd-worker
FIXTURE = ROOT / "tests/fixtures/nfd_feature_file/numaprobe"
FEATURES_D = "etc/kubernetes/node-feature-discovery/features.d"
# The sample's label lines, as NFD should publish them.
FIXTURE_LABELS = {"numaprobe.io/latency-local-ns": "92", "numaprobe.io/drift-alerts-armed": "false"}
# A kubeconfig the worker parses and never uses (-no-publish): nothing listens on port 9.
KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
users: [{name: none, user: {}}]
current-context: none
"""


@pytest.fixture(scope="module")
def worker():
    path = os.environ.get("NUMAPROBE_NFD_WORKER") or str(
        pathlib.Path(tools_dir()) / f"nfd-worker-{NFD_VERSION}" / "nfd-worker")
    if not os.access(path, os.X_OK):
        unavailable(f"{path} missing: .ci/install-deps builds nfd-worker {NFD_VERSION} (.ci/build-nfd-worker)")
    return path


def rfc3339(when):
    return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sample(expiry):
    """The fixture file with its `# +expiry-time` set to `expiry`."""
    text = FIXTURE.read_text()
    assert re.search(r"^# \+expiry-time=\S+$", text, re.M), text
    return re.sub(r"^# \+expiry-time=\S+$", f"# +expiry-time={rfc3339(expiry)}", text, flags=re.M)


def in_an_hour():
    return datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)


def label_lines(text, every=False):
    """What NFD's local source should make labels of: each `name=value` line not
    directly after `# +no-label` (a line without `=` is `name=true`); with
    `every`, its raw features: every such line."""
    labels, no_label = {}, False
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            no_label = no_label or line == "# +no-label"
            continue
        name, _, value = line.partition("=")
        if every or not no_label:
            labels[name] = value if "=" in line else "true"
        no_label = False
    return labels


def klog_block(log, header):
    """The YAML of klog's multi-line value `<header><\\n\\t...\\n >`."""
    m = re.search(re.escape(header) + r"<\n((?:\t.*\n)*) >", log)
    assert m, f"no {header!r} block in the worker's log:\n{log}"
    return yaml.safe_load("".join(line[1:] + "\n" for line in m.group(1).splitlines()))


def run_worker(worker, features, tmp_path):
    """nfd-worker once on the directory `features`; (labels, features) as it
    logs them: the labels it would publish, and the local source's raw
    features by kind ("label", "feature")."""
    root = tmp_path / "nfd-root"
    shutil.rmtree(root, ignore_errors=True)
    (root / FEATURES_D).mkdir(parents=True)
    (root / "nfd-worker").touch()
    (root / "kubeconfig").write_text(KUBECONFIG)
    # Root here (CI is); elsewhere a user namespace gives the mounts and the chroot.
    unshare = [require("unshare"), "--mount"] + ([] if os.geteuid() == 0 else ["--user", "--map-root-user"])
    # sh -c SCRIPT ROOT WORKER FEATURES FEATURES_D ARGS...: $0 is the new root.
    script = ('mount --bind "$1" "$0/nfd-worker" && mount --bind "$2" "$0/$3" && shift 3 && '
              'exec chroot "$0" /nfd-worker "$@"')
    argv = [*unshare, "sh", "-c", script, str(root), worker, str(features), FEATURES_D,
            "-oneshot", "-no-publish", "-config=", "-feature-sources=local", "-label-sources=local",
            "-kubeconfig=/kubeconfig", "-v=3"]
    env = {**os.environ, "PATH": os.environ.get("PATH", "/usr/bin:/bin") + ":/usr/sbin:/sbin"}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log
    found = klog_block(log, '"discovered features" featureSource="local" features=')
    attributes = found.get("attributes") or {}
    raw = {kind: (attributes.get(kind) or {}).get("elements") or {} for kind in ("label", "feature")}
    return klog_block(log, '"feature discovery completed" labels=') or {}, raw


def test_label_lines_are_labels_and_no_label_lines_only_features(worker, tmp_path):
    features = tmp_path / "features.d"
    features.mkdir()
    text = sample(in_an_hour())
    (features / "numaprobe").write_text(text)
    assert label_lines(text) == FIXTURE_LABELS  # the helper the daemon's test relies on
    labels, raw = run_worker(worker, features, tmp_path)
    assert labels == FIXTURE_LABELS
    assert raw["label"] == FIXTURE_LABELS
    # `# +no-label` hides the next line from the labels only: it stays a raw
    # feature, and only that one line is hidden.
    assert raw["feature"] == {**FIXTURE_LABELS, "numaprobe.io/distance-0-0": "10"} == label_lines(text, every=True)


def test_an_expired_file_gives_no_labels(worker, tmp_path):
    features = tmp_path / "features.d"
    features.mkdir()
    (features / "numaprobe").write_text(sample(datetime.datetime.now(datetime.timezone.utc)
                                               - datetime.timedelta(minutes=1)))
    labels, raw = run_worker(worker, features, tmp_path)
    assert labels == {}
    assert raw == {"label": {}, "feature": {}}


def test_a_dot_file_is_not_read(worker, tmp_path):
    """numaprobe writes `.numaprobe...` and renames it to `numaprobe`: the
    temporary file is never read, alone or beside the real one."""
    features = tmp_path / "features.d"
    features.mkdir()
    temporary = features / ".numaprobe.tmp"
    temporary.write_text(sample(in_an_hour()).replace("=92", "=93"))
    labels, raw = run_worker(worker, features, tmp_path)
    assert labels == {} and raw == {"label": {}, "feature": {}}
    (features / "numaprobe").write_text(sample(in_an_hour()))
    labels, raw = run_worker(worker, features, tmp_path)
    assert labels == FIXTURE_LABELS
    assert raw["feature"]["numaprobe.io/latency-local-ns"] == "92"


# What the daemon's file must look like to be read as intended: within NFD's
# size limit, names in numaprobe's namespace that are valid label names,
# integer or boolean values, one RFC 3339 UTC expiry not yet past, no
# directive but `# +no-label` and the expiry.
NFD_MAX_FILE_BYTES = 65536  # source/local/local.go, MaxFeatureFileSize
LINE = re.compile(r"numaprobe\.io/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?=(-?[0-9]+|true|false)")


def check_format(text, read_at):
    """`text` as read at `read_at` from a running daemon's directory."""
    assert len(text.encode()) <= NFD_MAX_FILE_BYTES, len(text.encode())
    expiry = re.findall(r"^# \+expiry-time=(\S+)$", text, re.M)
    assert len(expiry) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", expiry[0]), text
    assert datetime.datetime.strptime(expiry[0], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc) > read_at, f"expired when read at {rfc3339(read_at)}:\n{text}"
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert LINE.fullmatch(line), line
        elif line.startswith("# +"):
            assert line == "# +no-label" or line.startswith("# +expiry-time="), line


def test_the_daemons_file_gives_its_label_lines(worker, tmp_path):
    binary = numaprobe_bin()
    features = tmp_path / "features.d"
    features.mkdir()
    config = write_config(str(tmp_path))
    with open(config, "a") as f:
        f.write(f"node_feature_directory: {features}\n")
    p = subprocess.run([binary, "check-config", "--syntax-only", config], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    written = features / "numaprobe"
    with Daemon(binary, config) as daemon:
        daemon.wait_for(written.exists, timeout=60 * SANITIZED_SLOWDOWN, what=f"{written}")
        # The daemon rewrites the file as results come in: compare the worker's
        # labels with a file that did not change while the worker read it.
        for _ in range(10):
            read_at = datetime.datetime.now(datetime.timezone.utc)
            before = written.read_text()
            labels, raw = run_worker(worker, features, tmp_path)
            if written.read_text() == before:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"{written} changed during each of 10 worker runs")
    check_format(before, read_at)
    expected = label_lines(before)
    assert expected, before
    assert labels == expected, before
    assert raw["label"] == expected
    assert raw["feature"] == label_lines(before, every=True)
