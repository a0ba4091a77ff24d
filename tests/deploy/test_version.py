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
  and keeps the baseline: what the drift alerts' descriptions list;
* a shallow clone (`git clone --depth 1`), whose version X.Y.Z~dev.0 sorts
  before every earlier build, configures and builds for local use with a
  CMake warning, and makes no package: cpack, the `package` and
  `package_source` targets, deploy/package/from-deb.py,
  deploy/container/build-image.py and deploy/helm/make-chart.py stop with the
  reason and the fix (`git fetch --unshallow`), after which the next build
  has the commit count. Nothing is compiled for this (seconds).

Environment (ctest sets it): NUMAPROBE_BIN, NUMAPROBE_VERSION, NUMAPROBE_CMAKE,
NUMAPROBE_CPACK.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from deploy_env import numaprobe_bin, require, unavailable

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


# --- a shallow clone ------------------------------------------------------

UNORDERED = "does not sort after earlier builds"


def flat(text):
    """CMake wraps its messages: compare with whitespace runs as one space."""
    return " ".join(text.split())


def tool(name, variable):
    return os.environ.get(variable) or require(name)


@pytest.fixture
def shallow_clone(tmp_path):
    """A `--depth 1` clone of this checkout's commit (file:// so that the depth
    applies; no tags, so never a release) holding this checkout's files, edits
    and new files included; configured with the daemon preset (the README's
    first command). Returns (clone, build dir, configure's output)."""
    if git("rev-parse", "--is-inside-work-tree") != "true":
        unavailable(f"{ROOT} is not a git checkout")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-tags", "--no-checkout", ROOT.as_uri(), clone],
                   check=True, capture_output=True)
    assert subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=clone, capture_output=True,
                          text=True).stdout.strip() == "true", "git clone --depth 1 did not make a shallow clone"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        source, target = ROOT / rel, clone / rel
        if os.path.lexists(source):  # a tracked file deleted in the checkout is left out
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    p = subprocess.run([tool("cmake", "NUMAPROBE_CMAKE"), "--preset", "daemon"], cwd=clone, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, f"configuring a shallow clone failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return clone, clone / "build" / "daemon", p.stdout + p.stderr


def assert_refused(p, what):
    out = flat(p.stdout + p.stderr)
    assert p.returncode != 0, f"{what} made a package of a shallow clone:\n{out[-2000:]}"
    assert re.search(r"no package of this build: version \S+~dev\.0 " + UNORDERED, out), out[-2000:]
    assert "this is a shallow clone" in out and "git fetch --unshallow" in out, out[-2000:]


def test_a_shallow_clone_builds_for_local_use_but_makes_no_package(shallow_clone):
    clone, build, configure = shallow_clone
    warning = flat(configure)
    assert "CMake Warning" in configure, configure[-3000:]
    assert re.search(r"numaprobe: version \S+~dev\.0 " + UNORDERED + r": this is a shallow clone", warning), \
        warning[-3000:]
    assert "git fetch --unshallow" in warning and "making a package or image of it is refused" in warning

    cmake, cpack = tool("cmake", "NUMAPROBE_CMAKE"), tool("cpack", "NUMAPROBE_CPACK")
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    assert_refused(subprocess.run([cpack, "-G", "DEB", "--config", build / "CPackConfig.cmake"], cwd=build,
                                  capture_output=True, text=True, timeout=120, env=env), "cpack -G DEB")
    assert_refused(subprocess.run([cpack, "--config", build / "CPackSourceConfig.cmake"], cwd=build,
                                  capture_output=True, text=True, timeout=120, env=env), "cpack (source)")
    assert_refused(subprocess.run([cmake, "--build", build, "--target", "package"], capture_output=True,
                                  text=True, timeout=120, env=env), "the package target")
    assert not (build / "numaprobe").exists(), "the package target compiled the daemon before refusing"
    made = [p.name for p in (build / "package").glob("*") if p.is_file()] if (build / "package").is_dir() else []
    assert not made, made


def test_fetching_the_history_gives_the_commit_count(shallow_clone):
    """The fix the refusal names: after `git fetch --unshallow` the next build
    re-runs CMake by itself and the version is this checkout's."""
    clone, build, _ = shallow_clone
    if git("rev-parse", "--is-shallow-repository") != "false":
        unavailable(f"{ROOT} is itself shallow: there is no history to fetch from it")
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=clone, check=True, capture_output=True, timeout=120)
    p = subprocess.run([tool("cmake", "NUMAPROBE_CMAKE"), "--build", build, "--target", "help"],
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    count = git("rev-list", "--count", "HEAD")
    assert re.search(rf"^-- numaprobe \S+~dev\.{count} ", out, re.M), out[-3000:]
    assert UNORDERED not in flat(out)
    assert not (build / "CPackRefusal.cmake").exists()
    assert "CPACK_PROJECT_CONFIG_FILE" not in (build / "CPackConfig.cmake").read_text()


def fake_deb(tmp_path, version):
    """A .deb with numaprobe's control fields and no files: what the package
    scripts read first is its Version."""
    tree = tmp_path / f"deb-{version}"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: numaprobe\nVersion: {version}\nArchitecture: amd64\nMaintainer: test <t@example.org>\n"
        "Description: test\n")
    deb = tmp_path / f"numaprobe_{version}_amd64.deb"
    subprocess.run([require("dpkg-deb"), "--root-owner-group", "--build", tree, deb], check=True,
                   capture_output=True)
    return deb


@pytest.mark.parametrize("script", ["package/from-deb.py", "container/build-image.py"])
def test_the_package_scripts_refuse_a_dev0_deb(tmp_path, script):
    out = tmp_path / "out"
    out.mkdir()
    command = {"package/from-deb.py": ["--no-rpm", "--out", out],
               "container/build-image.py": ["--rootfs", out / "rootfs.tar"]}[script]
    runs = {}
    for version in ("0.2.0~dev.0", "0.2.0~dev.5"):
        runs[version] = subprocess.run([sys.executable, ROOT / "deploy" / script, fake_deb(tmp_path, version),
                                        *command], capture_output=True, text=True, timeout=120)
    refused = flat(runs["0.2.0~dev.0"].stderr)
    assert runs["0.2.0~dev.0"].returncode != 0
    assert f"version 0.2.0~dev.0 {UNORDERED}" in refused and "git fetch --unshallow" in refused, refused
    assert not list(out.iterdir())
    # The same .deb at a version with a commit count gets past the check (and
    # fails later, on the files this one lacks): the version is the reason.
    assert UNORDERED not in runs["0.2.0~dev.5"].stderr, runs["0.2.0~dev.5"].stderr


def test_make_chart_refuses_a_dev0_image(tmp_path):
    p = subprocess.run([sys.executable, ROOT / "deploy" / "helm" / "make-chart.py", tmp_path / "chart",
                        "--image", "example.org/numaprobe:0.2.0-dev.0"], capture_output=True, text=True, timeout=60)
    refused = flat(p.stderr)
    assert p.returncode != 0 and f"version 0.2.0-dev.0 {UNORDERED}" in refused, refused
    assert "git fetch --unshallow" in refused and not (tmp_path / "chart").exists()
