# SPDX-License-Identifier: Apache-2.0
"""The container image (ctest label `container`): deploy/container/build-image.py
makes it from the .deb that the package_build fixture built (its files and
the libraries they load, on an empty base), podman builds
deploy/container/Containerfile over that; then it runs the way
deploy/kubernetes/daemonset.yaml runs it: the init container that hands the
state directory (the hostPath) to 65534, then the daemon as 65534 with a
read-only root, every capability dropped but SYS_NICE, no privilege
escalation, the memory limit, the ConfigMap's config mounted read-only and the
DaemonSet's args; and the way deploy/kubernetes-tls/ runs it: HTTPS with basic
auth, the web config and certificate mounted read-only. It is scraped on the
container's own loopback (nsenter into its network namespace: no bridge, no
iptables, no port forwarding), stopped within the grace period, and started
again to show the state directory keeps the baseline.

podman runs with deploy/container/containers.conf (runc, explicit ulimits:
see deploy/README.md). The build has no network (build-image.py downloads the
libraries with mmdebstrap beforehand) and runs use none, so netavark never
runs; the test checks that iptables and ip_forward are as they were.

NUMAPROBE_CONTAINER_IMAGE=<image> skips the build and tests that image
instead (for quick reruns; never set in CI).
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest
import yaml

import runbook_procedures
from deploy_env import deb_path, require, tools_dir, unavailable

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DEPLOY = ROOT / "deploy"
CONTAINERS_CONF = DEPLOY / "container" / "containers.conf"
IMAGE = "localhost/numaprobe:ci-test"
# Bytes, as podman reports them: an exporter's image is a few tens of MB
# (the binary and its libraries). deploy/README.md has today's figure.
IMAGE_SIZE_GOAL = 40 * 1000 * 1000
# What the image may hold under /usr/bin: the daemon and the init container's
# tool. No shell, no package manager.
EXECUTABLES = {"usr/bin/numaprobe", "usr/bin/install"}
# bcrypt ($2y$, cost 10) of "secret", for the TLS overlay's basic auth.
SECRET_HASH = "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"
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


def podman(*args, check=True, timeout=600):
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    p = subprocess.run([shutil.which("podman"), *args], capture_output=True, text=True, env=env, timeout=timeout)
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
    for tool in ("podman", "runc", "mmdebstrap", "readelf", "dpkg-deb", "nsenter", "curl", "openssl"):
        require(tool)
    if os.environ.get("NUMAPROBE_CONTAINER_IMAGE"):  # an image built before, for quick reruns
        return os.environ["NUMAPROBE_CONTAINER_IMAGE"]
    deb = deb_path()
    t0 = time.monotonic()
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    p = subprocess.run([sys.executable, str(DEPLOY / "container" / "build-image.py"), deb, "--tag", IMAGE,
                        "--engine", shutil.which("podman")], capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, f"build-image.py exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}"
    print(f"\ncontainer: image built from {pathlib.Path(deb).name} in {time.monotonic() - t0:.0f} s\n"
          + "\n".join(line for line in p.stderr.splitlines() if line.startswith("build-image:")))
    return IMAGE


@pytest.fixture(scope="module")
def image_root(image):
    """The image's root filesystem, mounted read-only on the host."""
    path = pathlib.Path(podman("image", "mount", image).stdout.strip())
    yield path
    podman("image", "unmount", image, check=False)


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


def start_daemon(image, pod, volumes, args, read_only=()):
    """The daemon container; `read_only` adds (host directory, mount path)
    pairs mounted read-only, as Secrets are."""
    c = pod["containers"][0]
    name = f"numaprobe-ci-{uuid.uuid4().hex[:8]}"
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    volume_kinds = {v["name"]: v for v in pod["volumes"]}
    cmd = ["run", "-d", "--name", name, "--network=none",
           *security_flags(c["securityContext"], pod["securityContext"]),
           f"--memory={k8s_memory(c['resources']['limits']['memory'])}",
           "-v", f"{volumes['config']}:{mounts['config']['mountPath']}:ro",
           "-v", f"{volumes['state']}:{mounts['state']['mountPath']}"]
    for host, path in read_only:
        cmd += ["-v", f"{host}:{path}:ro"]
    assert "emptyDir" in volume_kinds["lock"]
    cmd += ["--tmpfs", f"{mounts['lock']['mountPath']}:rw,size=1m,mode=1777"]
    podman(*cmd, image, *args, timeout=120)
    return name


def container_pid(name):
    return int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())


def in_netns(name, *cmd):
    return subprocess.run(["nsenter", "-t", str(container_pid(name)), "-n", *cmd],
                          capture_output=True, text=True, timeout=30)


def scrape(name, path, url="http://127.0.0.1:10062", curl_options=()):
    """(HTTP status or 0, body) of `url`+`path` from inside the container's network namespace."""
    p = in_netns(name, "curl", "-sS", "--max-time", "5", "-w", "\n%{http_code}", *curl_options, url + path)
    body, _, code = p.stdout.rpartition("\n")
    return (int(code) if code.isdigit() else 0), body


def wait_for(name, path, want, timeout, **scrape_options):
    deadline = time.monotonic() + timeout
    while True:
        code, body = scrape(name, path, **scrape_options)
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
    # The source label comes from the one place the project's address is written.
    homepage = re.search(r"^ *homepage: '([^']+)',$", (ROOT / "grafana/config.libsonnet").read_text(), re.M)
    labels = config["Labels"]
    assert labels["org.opencontainers.image.source"] == homepage.group(1), labels
    # The other OCI labels: the package's version and revision, the license.
    assert labels["org.opencontainers.image.version"] == os.environ["NUMAPROBE_VERSION"], labels
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0", labels
    revision = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    assert labels["org.opencontainers.image.revision"] == (revision or "unknown"), labels
    assert size <= IMAGE_SIZE_GOAL, f"image is {size / 1e6:.1f} MB, goal {IMAGE_SIZE_GOAL / 1e6:.0f} MB"


def test_image_holds_the_package_and_no_shell(image_root):
    """The binary and the documented config; the two writable paths with the
    owners and modes the daemon needs; nothing to run but numaprobe and the
    init container's tool."""
    executables = {str(p.relative_to(image_root)) for d in ("usr/bin", "usr/sbin", "usr/local/bin")
                   for p in (image_root / d).glob("*") if p.is_file() and os.access(p, os.X_OK)}
    assert executables == EXECUTABLES, executables
    for absent in ("bin/sh", "usr/bin/sh", "usr/bin/dpkg", "usr/bin/apt-get", "usr/bin/busybox"):
        assert not os.path.lexists(image_root / absent), absent
    assert (image_root / "etc/numaprobe/numaprobe.yaml").read_text() == (ROOT / "config/numaprobe.yaml").read_text()
    st = (image_root / "var/lib/numaprobe").stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o700)
    assert (image_root / "run/lock").stat().st_mode & 0o7777 == 0o1777


def check_sbom(image_root, version):
    """The SBOM in the image (build-image.py): valid SPDX 2.3 for the SPDX
    project's own validator (spdx-tools, pinned in .ci/install-deps), naming
    numaprobe, every Debian package the image holds files of (the status.d
    entries scanners read) and every source linked into numaprobe."""
    sbom = image_root / "usr/share/doc/numaprobe/sbom.spdx.json"
    validator = pathlib.Path(tools_dir()) / "venv" / "bin" / "pyspdxtools"
    if not validator.exists():
        unavailable(f"{validator} missing: .ci/install-deps installs spdx-tools into the tools venv")
    p = subprocess.run([str(validator), "--infile", str(sbom)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "invalid" not in (p.stdout + p.stderr).lower(), p.stdout + p.stderr
    document = json.loads(sbom.read_text())
    packages = {pkg["name"]: pkg for pkg in document["packages"]}
    assert packages["numaprobe"]["versionInfo"] == version
    assert packages["numaprobe"]["licenseDeclared"] == "Apache-2.0"
    status = sorted(p.name for p in (image_root / "var/lib/dpkg/status.d").iterdir())
    assert status, "no status.d entries"
    for name in status:
        entry = (image_root / "var/lib/dpkg/status.d" / name).read_text()
        assert re.search(rf"^Package: {re.escape(name)}$", entry, re.M) and "Status: install ok installed" in entry
        assert name in packages, f"{name} is in the image but not in the SBOM"
        assert (image_root / f"usr/share/doc/{name}/copyright").exists() or name == "numaprobe", name
    fields = subprocess.run(["dpkg-deb", "-f", deb_path(), "Static-Built-Using"], capture_output=True,
                            text=True).stdout
    linked = re.findall(r"([a-z0-9][a-z0-9.+-]*) \(= ([^)]+)\)", fields)
    assert linked, fields
    static = {(r["relatedSpdxElement"]) for r in document["relationships"] if r["relationshipType"] == "STATIC_LINK"}
    by_id = {pkg["SPDXID"]: pkg for pkg in document["packages"]}
    assert sorted((by_id[i]["name"], by_id[i]["versionInfo"]) for i in static) == sorted(linked)
    return document


def test_image_sbom_and_package_status(image_root):
    check_sbom(image_root, os.environ["NUMAPROBE_VERSION"])


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


def openssl(*args):
    p = subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p


def make_server_certificate(directory, server_name):
    """ca.crt, and tls.crt/tls.key for `server_name` signed by it: what the
    numaprobe-tls Secret holds (EC P-256, milliseconds each)."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=numaprobe-test-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-keyout", directory / "ca.key", "-out", directory / "ca.crt")
    (directory / "leaf.ext").write_text(f"subjectAltName=DNS:{server_name}\nextendedKeyUsage=serverAuth\n")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-subj", f"/CN={server_name}", "-keyout", directory / "tls.key", "-out", directory / "tls.csr")
    openssl("x509", "-req", "-in", directory / "tls.csr", "-CA", directory / "ca.crt", "-CAkey", directory / "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", directory / "leaf.ext", "-out", directory / "tls.crt")
    for name in ("ca.key", "leaf.ext", "tls.csr", "ca.srl"):
        (directory / name).unlink(missing_ok=True)
    for f in directory.iterdir():
        f.chmod(0o444)  # the Secrets' defaultMode


def test_serves_https_as_the_tls_overlay_configures_it(image, manifests, volumes, cleanup, tmp_path):
    """deploy/kubernetes-tls/: its args and read-only Secret mounts; scraped
    as its PodMonitor does (HTTPS verified against the CA for serverName,
    basic auth). Without credentials: 401."""
    pod, _ = manifests
    overlay = yaml.safe_load((DEPLOY / "kubernetes-tls" / "daemonset-tls.yaml").read_text())
    container = overlay["spec"]["template"]["spec"]["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    endpoint = yaml.safe_load((DEPLOY / "kubernetes-tls" / "podmonitor-tls.yaml").read_text())[
        "spec"]["podMetricsEndpoints"][0]
    assert endpoint["scheme"] == "https"
    server_name = endpoint["tlsConfig"]["serverName"]
    web_config = next(a.split("=", 1)[1] for a in container["args"] if a.startswith("--web.config.file="))
    assert os.path.dirname(web_config) == mounts["web"], (web_config, mounts)

    tls, web = tmp_path / "tls", tmp_path / "web"
    tls.mkdir()
    web.mkdir()
    make_server_certificate(tls, server_name)
    (web / os.path.basename(web_config)).write_text(
        f"tls_server_config:\n  cert_file: {mounts['tls']}/tls.crt\n  key_file: {mounts['tls']}/tls.key\n"
        f"basic_auth_users:\n  prometheus: {SECRET_HASH}\n")
    (web / os.path.basename(web_config)).chmod(0o444)

    run_init_container(image, pod, volumes)
    name = start_daemon(image, pod, volumes, container["args"],
                        read_only=[(tls, mounts["tls"]), (web, mounts["web"])])
    cleanup.append(name)
    https = {"url": f"https://{server_name}:10062",
             "curl_options": ("--resolve", f"{server_name}:10062:127.0.0.1", "--cacert", str(tls / "ca.crt"))}
    authorized = {**https, "curl_options": (*https["curl_options"], "-u", "prometheus:secret")}
    body = wait_for(name, "/metrics", r"^numaprobe_build_info", 60, **authorized)
    assert "numaprobe_build_info" in body
    assert scrape(name, "/metrics", **https)[0] == 401
    seconds, code = stop(name)
    assert code == 0 and seconds < GRACE_SECONDS


def run_runbook_procedures(name, reloads_before=0):
    """docs/runbook.md's container commands (`podman exec NAME numaprobe ...`,
    NAME this container) and the numaprobe commands its Kubernetes commands run
    in a pod (the same ones): the image has no shell or kill, yet each reaches
    the daemon, pid 1 of the container, and takes effect."""
    procedures = runbook_procedures.procedures()
    container = [runbook_procedures.numaprobe_argv(line) for line in procedures["container"]]
    assert all(container), procedures["container"]
    in_pods = [a for a in map(runbook_procedures.numaprobe_argv, procedures["kubernetes"]) if a]
    assert {tuple(a) for a in in_pods} == {tuple(a) for a in container}, (in_pods, container)
    effects = {("numaprobe", "reload"): None,
               ("numaprobe", "baseline", "accept"): "accepted",
               ("numaprobe", "baseline", "reset"): "reset"}
    assert {tuple(a) for a in container} == set(effects)
    for argv in container:
        p = podman("exec", name, *argv, timeout=60)
        assert "sent SIGHUP to numaprobe serve (pid 1)" in p.stdout, (argv, p.stdout, p.stderr)
        origin = effects[tuple(argv)]
        if origin:
            wait_for(name, "/metrics", rf'^numaprobe_baseline_info\{{.*origin="{origin}"', 60)
    logs = podman("logs", name)
    assert (logs.stdout + logs.stderr).count("Received SIGHUP") == reloads_before + len(container), logs.stderr[-3000:]


def test_probes_run_and_the_state_directory_keeps_the_baseline(image, manifests, volumes, cleanup):
    """Same container settings with a fast config: the probes can bind memory
    under podman's seccomp profile with SYS_NICE in the bounding set; the
    runbook's reload and baseline commands work through `podman exec`; and a
    new container on the same state directory (the hostPath) restores the
    baseline."""
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
    # The site configuration is a mounted directory (deploy/README.md, "Your
    # configuration"): an edit on the host, then `numaprobe reload` in the
    # container, and the daemon runs the edited file. A directory, not the
    # file: an editor that replaces the file would leave a file mount on the
    # old one.
    (volumes["config"] / "numaprobe.yaml").write_text(FAST_CONFIG.replace("duty_cycle: 0.2,", "duty_cycle: 0.25,"))
    p = podman("exec", name, "numaprobe", "reload", timeout=60)
    assert "sent SIGHUP to numaprobe serve (pid 1)" in p.stdout, (p.stdout, p.stderr)
    wait_for(name, "/metrics", r"^numaprobe_duty_cycle_budget_ratio 0\.25$", 60)
    run_runbook_procedures(name, reloads_before=1)
    wait_for(name, "/metrics", r"^numaprobe_baseline_complete 1", 180)
    assert stop(name)[1] == 0
    assert (volumes["state"] / "state.json").is_file()

    run_init_container(image, pod, volumes)  # as on every pod start
    again = start_daemon(image, pod, volumes, c["args"])
    cleanup.append(again)
    body = wait_for(again, "/metrics", r'^numaprobe_baseline_info\{.*origin="restored"', 60)
    assert stop(again)[1] == 0


def test_no_network_side_effects(image, network_before):
    assert host_network_state() == network_before
