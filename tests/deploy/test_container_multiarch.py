# SPDX-License-Identifier: Apache-2.0
"""The multi-architecture image (ctest entry `container_multiarch`, label
`container`, in the release-aarch64 preset): deploy/container/build-image.py
given the amd64 .deb (the release preset's) and the arm64 one (this build's)
makes one image per architecture and an OCI image index naming both under one
tag. Each architecture's image is run as the DaemonSet runs it (the arm64 one
under qemu-user through binfmt_misc): it serves, is scraped, and stops within
the grace period; its binary says which platform it was built for. The arm64
image's labels and SBOM are checked as test_container.py checks the amd64 one's.

Timings under emulation mean nothing and none are asserted but the grace
period, which emulation stretches (30 s here, 10 s in the DaemonSet).

Environment (ctest sets it): NUMAPROBE_DEB (arm64), NUMAPROBE_DEB_AMD64 (the
release preset's package: tests/run_all.sh builds that preset first),
NUMAPROBE_VERSION.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from deploy_env import deb_path, require, unavailable
from test_container import CONTAINERS_CONF, DEPLOY, check_sbom, container_pid, podman, scrape

INDEX = "localhost/numaprobe:ci-multiarch"
ARCHES = ("amd64", "arm64")
GRACE_SECONDS = 30  # under emulation; the DaemonSet's 10 s is test_container.py's


@pytest.fixture(scope="module")
def index():
    if os.geteuid() != 0:
        unavailable("the container test runs podman as root")
    for tool in ("podman", "runc", "mmdebstrap", "readelf", "dpkg-deb", "nsenter", "curl"):
        require(tool)
    if not pathlib.Path("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists():
        unavailable("no binfmt_misc entry for qemu-aarch64 (.ci/install-deps registers it): the arm64 image "
                    "cannot run here")
    amd64 = os.environ.get("NUMAPROBE_DEB_AMD64", "")
    if not os.path.isfile(amd64):
        unavailable(f"the amd64 package {amd64!r} is missing: build the release preset first (tests/run_all.sh does)")
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(DEPLOY / "container" / "build-image.py"), amd64, deb_path(),
                        "--tag", INDEX, "--engine", shutil.which("podman")],
                       capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, f"build-image.py exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    print(f"\nmulti-arch image built in {time.monotonic() - t0:.0f} s\n"
          + "\n".join(line for line in p.stderr.splitlines() if line.startswith("build-image:")))
    yield INDEX
    podman("manifest", "rm", INDEX, check=False)
    for arch in ARCHES:
        podman("rmi", f"{INDEX}-{arch}", check=False)


def test_one_tag_is_an_oci_index_of_both_architectures(index, tmp_path):
    """Pushed as deploy/README.md says (`podman manifest push --all --format
    oci`), into an OCI image layout here: the tag names an OCI image index of
    a linux/amd64 and a linux/arm64 image. (podman keeps the list in its own
    storage as a Docker manifest list; the push writes the OCI form.)"""
    layout = tmp_path / "layout"
    podman("manifest", "push", "--all", "--format", "oci", index, f"oci:{layout}:numaprobe", timeout=600)
    top = json.loads((layout / "index.json").read_text())
    (entry,) = [m for m in top["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name")
                == "numaprobe"]
    assert entry["mediaType"] == "application/vnd.oci.image.index.v1+json", entry
    algorithm, digest = entry["digest"].split(":")
    manifest = json.loads((layout / "blobs" / algorithm / digest).read_text())
    assert manifest["mediaType"] == "application/vnd.oci.image.index.v1+json", manifest
    platforms = sorted((m["platform"]["os"], m["platform"]["architecture"]) for m in manifest["manifests"])
    assert platforms == [("linux", "amd64"), ("linux", "arm64")], platforms
    for arch in ARCHES:
        config = json.loads(podman("image", "inspect", f"{index}-{arch}").stdout)[0]
        assert config["Architecture"] == arch
        labels = config["Config"]["Labels"]
        assert labels["org.opencontainers.image.version"] == os.environ["NUMAPROBE_VERSION"], labels
        assert labels["org.opencontainers.image.licenses"] == "Apache-2.0", labels


def test_the_arm64_image_holds_an_sbom_of_itself(index):
    root = pathlib.Path(podman("image", "mount", f"{index}-arm64").stdout.strip())
    try:
        document = check_sbom(root, os.environ["NUMAPROBE_VERSION"])
        assert "arch=arm64" in json.dumps(document)
    finally:
        podman("image", "unmount", f"{index}-arm64", check=False)


@pytest.mark.parametrize("arch", ARCHES)
def test_each_architecture_serves_is_scraped_and_stops(index, arch, tmp_path):
    """The index resolved for `arch` (podman --platform), run as the
    DaemonSet runs it: non-root, read-only, no capability but SYS_NICE."""
    version = podman("run", "--rm", "--network=none", f"--platform=linux/{arch}", "--entrypoint",
                     "/usr/bin/numaprobe", index, "--version", timeout=300).stdout
    assert re.search(rf"^  platform: +linux/{arch}$", version, re.M), version
    state = tmp_path / "state"
    state.mkdir()
    os.chown(state, 65534, 65534)
    name = f"numaprobe-ci-{arch}-{os.getpid()}"
    podman("run", "-d", "--name", name, "--network=none", f"--platform=linux/{arch}", "--user=65534:65534",
           "--read-only", "--cap-drop=ALL", "--cap-add=SYS_NICE", "--security-opt=no-new-privileges",
           "-v", f"{state}:/var/lib/numaprobe", "--tmpfs", "/run/lock:rw,size=1m,mode=1777", index,
           "--config.file=/etc/numaprobe/numaprobe.yaml", "--web.listen-address=:10062", timeout=300)
    try:
        deadline = time.monotonic() + 300
        while True:
            code, body = scrape(name, "/metrics")
            if code == 200 and "numaprobe_build_info{" in body:
                break
            state_now = podman("inspect", "--format", "{{.State.Status}}", name, check=False).stdout.strip()
            assert state_now == "running" and time.monotonic() < deadline, \
                f"{arch}: /metrics never answered (state {state_now}):\n{podman('logs', name, check=False).stderr[-3000:]}"
            time.sleep(1)
        assert f'version="{os.environ["NUMAPROBE_VERSION"]}"' in body
        assert container_pid(name) > 0
        t0 = time.monotonic()
        podman("stop", "-t", str(GRACE_SECONDS), name, timeout=120)
        seconds = time.monotonic() - t0
        code = int(podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip())
        print(f"\n{arch}: stopped in {seconds:.1f} s, exit {code}")
        assert code == 0 and seconds < GRACE_SECONDS
    finally:
        podman("rm", "-f", name, check=False)
