# SPDX-License-Identifier: Apache-2.0
"""The build's version in every place it is said (ctest entry `version`,
label `deploy`), and a daemon upgrade as the host change the drift alerts name:

* `numaprobe --version` prints version, branch, revision, build user and
  date, compiler and platform as Prometheus exporters do; the version is the
  build's (cmake/version.cmake: X.Y.Z~dev.N between releases, N the commits in
  the history) and the revision the checkout's;
* numaprobe_build_info carries the same version, revision, branch and compiler;
* a daemon started on a state file written by another build (its host fact
  numaprobe_version "0.1.0") publishes numaprobe_host_change_timestamp_seconds
  {field="numaprobe_version", before="0.1.0", after="<version> (revision <rev>)"}
  and keeps the baseline: what the drift alerts' descriptions list.

Environment (ctest sets it): NUMAPROBE_BIN, NUMAPROBE_VERSION.
"""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from deploy_env import numaprobe_bin, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
FAST_CONFIG = """\
probes:
  latency: {{buffer_size: 16MiB, samples: 5, loads_per_sample: 5000}}
  bandwidth: {{enabled: false}}
  core_to_core: {{enabled: false}}
schedule: {{duty_cycle: 0.2, interval: 1s, jitter: 0.1}}
baseline: {{rounds: 1}}
state_directory: {state}
probe_lock_file: ""
"""


def build_version():
    version = os.environ.get("NUMAPROBE_VERSION")
    if not version:
        unavailable("NUMAPROBE_VERSION is not set (ctest sets it)")
    return version


def git(*args):
    p = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def version_fields():
    out = subprocess.run([numaprobe_bin(), "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.fullmatch(r"numaprobe, version (\S+) \(branch: (\S+), revision: (\S+)\)\n"
                     r"  build user: +(\S+@\S+)\n  build date: +(\d{8}-\d\d:\d\d:\d\d)\n"
                     r"  compiler: +(\S+ [\d.]+)\n  platform: +(linux/(?:amd64|arm64))\n", out)
    assert m, f"--version does not look like a Prometheus exporter's:\n{out}"
    return dict(zip(("version", "branch", "revision", "user", "date", "compiler", "platform"), m.groups()))


def test_version_says_what_the_build_is():
    fields = version_fields()
    assert fields["version"] == build_version()
    project = re.search(r"project\(numaprobe VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    count = git("rev-list", "--count", "HEAD")
    if git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD"):
        assert fields["version"] == project
    elif count and git("rev-parse", "--is-shallow-repository") == "false":
        assert fields["version"] == f"{project}~dev.{count}"
    revision = git("rev-parse", "--short=12", "HEAD")
    if revision:
        assert fields["revision"] == revision
        assert fields["branch"] == git("rev-parse", "--abbrev-ref", "HEAD")


def test_versions_sort_as_apt_and_rpm_sort_them():
    """X.Y.Z~dev.N sorts before X.Y.Z and after X.Y.Z~dev.(N-1), for dpkg
    (and rpm, whose ~ rule is the same: deploy/README.md)."""
    version = build_version()
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:~dev\.(\d+))?", version)
    assert m, version
    if not m.group(2):
        pytest.skip("a release build: nothing before it to compare")
    release, n = m.group(1), int(m.group(2))
    for lower, higher in ((f"{release}~dev.{max(n - 1, 0)}", version), (version, release), ("0.1.0", version),
                          (f"{release}~dev.9", f"{release}~dev.10")):
        if lower == higher:
            continue
        assert subprocess.run(["dpkg", "--compare-versions", lower, "lt", higher]).returncode == 0, (lower, higher)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def serve_until(config, want, timeout=120):
    """Runs the daemon until /metrics matches `want`; returns the text after a clean stop."""
    port = free_port()
    proc = subprocess.Popen([numaprobe_bin(), "serve", f"--config.file={config}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, body = time.monotonic() + timeout, ""
        while not re.search(want, body, re.M):
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, f"no {want!r} within {timeout} s:\n{body[-3000:]}"
            try:
                body = metrics(port)
            except OSError:
                pass
            time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    assert rc == 0, proc.stdout.read()
    return body


def test_build_info_and_an_upgrade_as_a_host_change(tmp_path):
    fields = version_fields()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    config = tmp_path / "numaprobe.yaml"
    config.write_text(FAST_CONFIG.format(state=state))

    body = serve_until(config, r"^numaprobe_baseline_complete 1")
    info = re.search(r"^numaprobe_build_info\{(.*)\} 1$", body, re.M)
    assert info, body[-2000:]
    labels = dict(re.findall(r'(\w+)="([^"]*)"', info.group(1)))
    assert labels == {"version": fields["version"], "revision": fields["revision"], "branch": fields["branch"],
                      "compiler": fields["compiler"]}, labels

    # The state file as an older numaprobe left it (the facts of format 2, host.facts).
    path = state / "state.json"
    saved = json.loads(path.read_text())
    fact = saved["host"]["facts"]["numaprobe_version"]
    assert fact == f"{fields['version']} (revision {fields['revision']})", fact
    saved["host"]["facts"]["numaprobe_version"] = "0.1.0"
    path.write_text(json.dumps(saved))

    body = serve_until(config, r'^numaprobe_host_change_timestamp_seconds\{.*field="numaprobe_version"')
    change = re.search(r"^numaprobe_host_change_timestamp_seconds\{(.*field=\"numaprobe_version\".*)\} \S+$",
                       body, re.M)
    labels = dict(re.findall(r'(\w+)="([^"]*)"', change.group(1)))
    assert labels["before"] == "0.1.0" and labels["after"] == fact, labels
    assert re.search(r'^numaprobe_baseline_info\{.*origin="restored"', body, re.M), "the baseline was not kept"
