# SPDX-License-Identifier: Apache-2.0
"""Static and offline checks of deploy/: the systemd unit, the container image
recipe and the Kubernetes manifests, and that they agree with each other and
with the documented default config.

Nothing here needs a Docker engine, a Kubernetes cluster or a running systemd:
those cannot be exercised on the build machine (see deploy/README.md).
Needs PyYAML (Debian: python3-yaml). NUMAPROBE_BIN (set by ctest) enables the
checks that run the binary (check-config, linked libraries).
"""
import importlib.util
import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import yaml

from deploy_env import numaprobe_bin, need

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DEPLOY = ROOT / "deploy"
UNIT = DEPLOY / "systemd" / "numaprobe.service"
DEFAULTS = DEPLOY / "systemd" / "numaprobe.default"
CONTAINERFILE = DEPLOY / "container" / "Containerfile"
K8S = DEPLOY / "kubernetes"
# What /etc/numaprobe/numaprobe.yaml starts as (it sets no key), and every
# key at its built-in default.
DEFAULT_CONFIG = ROOT / "config" / "numaprobe.yaml"
REFERENCE_CONFIG = ROOT / "docs" / "numaprobe.reference.yaml"

# The conventions every install method shares.
CONFIG_PATH = "/etc/numaprobe/numaprobe.yaml"
STATE_DIR = "/var/lib/numaprobe"
PORT = 10062
BINARY = "/usr/bin/numaprobe"
HEADROOM = 64 * 2**20  # memory beyond memory.budget for the process itself
DEFAULT_BUDGET = 2**30  # memory.budget when the config does not set it

# Syscalls the probes cannot work without (all in systemd's @resources group).
NUMA_SYSCALLS = {"mbind", "set_mempolicy", "get_mempolicy", "move_pages", "sched_setaffinity",
                 "sched_setscheduler", "setpriority"}


# --- sizes -------------------------------------------------------------------

_NUMAPROBE_UNITS = {"": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
                    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_K8S_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
              "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_SYSTEMD_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text, units):
    m = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", str(text).strip())
    assert m and m.group(2) in units, f"unparsable size {text!r}"
    return int(m.group(1)) * units[m.group(2)]


def parse_duration(text):
    """Seconds in a systemd time span such as 10s, 1min 30s, 500ms, 90."""
    units = {"": 1, "s": 1, "sec": 1, "ms": 1e-3, "m": 60, "min": 60, "h": 3600}
    parts = re.findall(r"(\d+)\s*([a-z]*)", text)
    assert parts and all(u in units for _, u in parts), f"unparsable duration {text!r}"
    return sum(int(n) * units[u] for n, u in parts)


def budget_of(config):
    budget = (config or {}).get("memory", {}).get("budget", DEFAULT_BUDGET)
    return parse_size(budget, _NUMAPROBE_UNITS)


def default_config():
    """Every key at its built-in default (tests/deploy/test_config_files.py
    checks the reference against the binary)."""
    return yaml.safe_load(REFERENCE_CONFIG.read_text())


# --- systemd unit ------------------------------------------------------------

def parse_unit(path):
    """{section: [(key, value), ...]}: keys may repeat, order kept."""
    sections, current, pending = {}, None, ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def last(unit, section, key):
    found = values(unit, section, key)
    return found[-1] if found else None


@pytest.fixture(scope="module")
def unit():
    return parse_unit(UNIT)


def test_unit_security_score():
    analyze = need("systemd-analyze")
    r = subprocess.run([analyze, "security", "--offline=yes", "--threshold=20", str(UNIT)],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+) (\w+)", r.stdout)
    assert m, r.stdout + r.stderr
    score = float(m.group(1))
    print(f"systemd-analyze security: {score} {m.group(2)}")
    assert r.returncode == 0, f"exposure {score} {m.group(2)} is above the 2.0 threshold\n{r.stdout}"
    assert score <= 2.0


def test_unit_verifies(tmp_path):
    """systemd-analyze verify on a copy whose ExecStart points at a binary that exists."""
    analyze = need("systemd-analyze")
    binary = os.environ.get("NUMAPROBE_BIN") or shutil.which("true")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace(BINARY, binary))
    r = subprocess.run([analyze, "verify", "--man=no", str(copy)],
                       capture_output=True, text=True, timeout=60)
    # Unknown or misspelt keys are only warnings (exit 0): any output fails.
    assert r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(), r.stdout + r.stderr


def test_unit_lifecycle(unit):
    assert last(unit, "Service", "Type") == "notify"
    assert last(unit, "Service", "NotifyAccess") == "main"
    assert last(unit, "Service", "WatchdogSec"), "the daemon sends WATCHDOG=1; use it"
    assert last(unit, "Service", "Restart") == "on-failure"
    assert "/bin/kill -HUP $MAINPID" in values(unit, "Service", "ExecReload")
    assert last(unit, "Service", "DynamicUser") == "yes"
    assert last(unit, "Service", "StateDirectory") == "numaprobe"
    assert last(unit, "Service", "ConfigurationDirectory") == "numaprobe"
    assert last(unit, "Install", "WantedBy") == "multi-user.target"
    assert values(unit, "Unit", "Documentation")


def test_unit_exec_start_and_defaults(unit):
    argv = shlex.split(last(unit, "Service", "ExecStart"))
    assert argv[:2] == [BINARY, "serve"]
    assert f"--config.file={CONFIG_PATH}" in argv
    assert "$ARGS" in argv, "flags from /etc/default/numaprobe must reach the daemon"
    assert "-/etc/default/numaprobe" in values(unit, "Service", "EnvironmentFile")
    defaults = dict(line.split("=", 1) for line in DEFAULTS.read_text().splitlines()
                    if line.strip() and not line.lstrip().startswith("#"))
    assert "ARGS" in defaults
    for pre in values(unit, "Service", "ExecStartPre"):
        assert shlex.split(pre.lstrip("-"))[:3] == [BINARY, "check-config", CONFIG_PATH]


def test_unit_never_denies_numa_syscalls(unit):
    filters = values(unit, "Service", "SystemCallFilter")
    assert filters, "expected a system call allow list"
    allowed = [f for f in filters if not f.startswith("~")]
    assert any({"@system-service", "@resources"} & set(f.split()) for f in allowed)
    for f in filters:
        if f.startswith("~"):
            denied = set(f[1:].split())
            assert "@resources" not in denied, "never deny @resources: it holds mbind, set_mempolicy, ..."
            assert not denied & NUMA_SYSCALLS, f"denies NUMA syscalls: {denied & NUMA_SYSCALLS}"
    # sd_notify needs AF_UNIX; the listener needs IP.
    families = set(" ".join(values(unit, "Service", "RestrictAddressFamilies")).split())
    assert {"AF_UNIX", "AF_INET", "AF_INET6"} <= families
    assert last(unit, "Service", "ProcSubset") in (None, "all"), "hwloc reads /proc/cpuinfo and /proc/meminfo"


def test_unit_can_take_the_host_probe_lock(unit):
    # ProtectSystem=strict makes /run read-only: the lock's directory must be listed.
    lock_dir = os.path.dirname(default_config()["probe_lock_file"])
    writable = " ".join(values(unit, "Service", "ReadWritePaths")).split()
    assert lock_dir in writable, f"{lock_dir} (probe_lock_file) is not in ReadWritePaths="


def test_unit_does_not_constrain_what_is_measured(unit):
    for key in ("CPUAffinity", "NUMAPolicy", "NUMAMask", "CPUQuota"):
        assert not values(unit, "Service", key), f"{key}= constrains or disturbs the measurement"
    assert last(unit, "Service", "CapabilityBoundingSet") == "", "no capability is needed on bare metal"


def test_unit_task_budget_is_the_tested_one(unit):
    """TasksMax= is the small budget the daemon is tested under (RLIMIT_NPROC and
    cgroup pids.max in tests/integration/test_task_limit.py), not one sized for
    a thread per client."""
    tested = re.search(r"^TASK_BUDGET = (\d+)$", (ROOT / "tests/integration/test_task_limit.py").read_text(), re.M)
    assert tested, "TASK_BUDGET not found in test_task_limit.py"
    assert last(unit, "Service", "TasksMax") == tested.group(1)


def test_unit_memory_max_fits_budget(unit):
    memory_max = last(unit, "Service", "MemoryMax")
    assert memory_max, "MemoryMax= missing"
    assert parse_size(memory_max, _SYSTEMD_UNITS) >= budget_of(default_config()) + HEADROOM


# --- Containerfile -------------------------------------------------------------

def containerfile_stages():
    """[(from_image, [(INSTRUCTION, args), ...]), ...]."""
    stages, pending = [], ""
    for raw in CONTAINERFILE.read_text().splitlines():
        stripped = raw.strip()
        if stripped.startswith("#"):
            continue
        line = (pending + " " + stripped) if pending else stripped
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        pending = ""
        if not line:
            continue
        instr, _, rest = line.partition(" ")
        instr = instr.upper()
        if instr == "FROM":
            stages.append((rest.split()[0], []))
        else:
            stages[-1][1].append((instr, rest.strip()))
    return stages


def exec_form(instructions, name):
    found = [rest for instr, rest in instructions if instr == name]
    assert found, f"no {name}"
    value = json.loads(found[-1])  # shell form is not JSON: fails here
    assert isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value


def build_image():
    """deploy/container/build-image.py as a module (its name has a dash)."""
    spec = importlib.util.spec_from_file_location("build_image", DEPLOY / "container" / "build-image.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runtime_stage():
    """The image's only stage: an empty base and build-image.py's root filesystem."""
    stages = containerfile_stages()
    assert [image for image, _ in stages] == ["scratch"], "the image must start from nothing"
    return stages[0][1]


def test_containerfile_runtime_is_non_root_exec_form(runtime_stage):
    users = [rest for instr, rest in runtime_stage if instr == "USER"]
    assert users, "runtime stage has no USER"
    uid = users[-1].split(":")[0]
    assert uid not in ("0", "root"), f"runs as {users[-1]}"
    assert exec_form(runtime_stage, "ENTRYPOINT") == [BINARY, "serve"]
    cmd = exec_form(runtime_stage, "CMD")
    assert f"--config.file={CONFIG_PATH}" in cmd
    assert f"--web.listen-address=:{PORT}" in cmd
    assert str(PORT) in " ".join(rest for instr, rest in runtime_stage if instr == "EXPOSE").split()


def test_containerfile_config_and_state(runtime_stage):
    """The root filesystem is the .deb's (config included) and the build runs
    check-config in the image; the state and lock directories are volumes
    that build-image.py makes writable for the daemon."""
    adds = [rest.split() for instr, rest in runtime_stage if instr in ("ADD", "COPY")]
    assert adds == [["rootfs.tar", "/"]], adds
    runs = [rest for instr, rest in runtime_stage if instr == "RUN"]
    assert [json.loads(r) for r in runs] == [[BINARY, "check-config", CONFIG_PATH]], runs
    assert default_config()["state_directory"] == STATE_DIR
    volumes = json.loads([rest for instr, rest in runtime_stage if instr == "VOLUME"][-1])
    lock_dir = os.path.dirname(default_config()["probe_lock_file"])
    assert STATE_DIR in volumes and lock_dir in volumes, "probe_lock_file must be writable under --read-only"
    module = build_image()
    assert "/" + module.STATE_DIR == STATE_DIR and "/" + module.LOCK_DIR == lock_dir
    user = [rest for instr, rest in runtime_stage if instr == "USER"][-1]
    assert user == f"{module.NOBODY}:{module.NOBODY}", "the state directory's owner must be the image's user"


# --- Kubernetes ----------------------------------------------------------------

def load_k8s(name):
    docs = [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    assert len(docs) == 1, f"{name}: expected one object"
    return docs[0]


@pytest.fixture(scope="module")
def daemonset():
    ds = load_k8s("daemonset.yaml")
    assert (ds["apiVersion"], ds["kind"]) == ("apps/v1", "DaemonSet")
    return ds


@pytest.fixture(scope="module")
def pod(daemonset):
    return daemonset["spec"]["template"]["spec"]


@pytest.fixture(scope="module")
def container(pod):
    assert len(pod["containers"]) == 1
    return pod["containers"][0]


@pytest.fixture(scope="module")
def configmap():
    cm = load_k8s("configmap.yaml")
    assert (cm["apiVersion"], cm["kind"]) == ("v1", "ConfigMap")
    return cm


def test_manifests_parse_and_kustomization_lists_them():
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert kust["kind"] == "Kustomization"
    assert "namespace" not in kust, "the base stays namespace-agnostic"
    listed = set(kust["resources"])
    manifests = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == manifests, f"unlisted {manifests - listed}, missing {listed - manifests}"
    for name in listed:
        obj = load_k8s(name)
        assert obj["metadata"]["name"].startswith("numaprobe")
        assert "namespace" not in obj["metadata"]


def test_kustomize_builds():
    kubectl = need("kubectl")
    r = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(r.stdout) if d)
    assert kinds == ["ConfigMap", "DaemonSet", "PodMonitor"]


def test_pod_security(pod, container):
    psc = pod["securityContext"]
    assert psc["runAsNonRoot"] is True
    assert psc["runAsUser"] == 65534 and psc["runAsGroup"] == 65534
    assert psc["seccompProfile"]["type"] == "RuntimeDefault"
    assert pod["automountServiceAccountToken"] is False
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        assert not pod.get(key), key
    # One hostPath, the state directory (deploy/README.md, "State on the node").
    host_paths = [v["hostPath"]["path"] for v in pod.get("volumes", []) if "hostPath" in v]
    assert host_paths == [STATE_DIR], host_paths
    csc = container["securityContext"]
    assert csc["allowPrivilegeEscalation"] is False
    assert csc["readOnlyRootFilesystem"] is True
    assert not csc.get("privileged")
    assert csc["capabilities"]["drop"] == ["ALL"]
    # SYS_NICE only: it unlocks mbind/set_mempolicy/get_mempolicy in RuntimeDefault.
    assert set(csc["capabilities"].get("add", [])) <= {"SYS_NICE"}


def test_state_owner_init_container(pod):
    """The kubelet creates the hostPath as root:root 0755; the init container
    hands it to the daemon's user with CHOWN and FOWNER and nothing else."""
    inits = pod.get("initContainers", [])
    assert [i["name"] for i in inits] == ["state-owner"]
    init = inits[0]
    user, group = pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
    assert init["command"] == ["/usr/bin/install", "-d", "-o", str(user), "-g", str(group), "-m", "0700", STATE_DIR]
    # The image has no shell: the tool must be one build-image.py puts in.
    assert init["command"][0].lstrip("/") in {path for _, path in build_image().TOOLS}
    sc = init["securityContext"]
    assert sc["runAsUser"] == 0 and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True and not sc.get("privileged")
    assert sc["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN", "FOWNER"]}
    assert [m["mountPath"] for m in init["volumeMounts"]] == [STATE_DIR]
    assert init["image"] == pod["containers"][0]["image"]


def test_pod_scheduling(daemonset, pod):
    strategy = daemonset["spec"]["updateStrategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxUnavailable"] == "10%"
    assert {"operator": "Exists"} in pod["tolerations"]
    assert pod.get("priorityClassName")
    selector = daemonset["spec"]["selector"]["matchLabels"]
    assert selector.items() <= daemonset["spec"]["template"]["metadata"]["labels"].items()


def test_resources(container, configmap):
    res = container["resources"]
    assert "cpu" not in res.get("limits", {}), "no CPU limit: CFS throttling corrupts measurements"
    limit = res["limits"]["memory"]
    # Between probes the daemon holds no buffers (~30 MiB resident): the
    # request covers that and the process headroom, not the probe buffers.
    assert parse_size(res["requests"]["memory"], _K8S_UNITS) >= HEADROOM, "request below the process's own 64Mi"
    assert parse_size(res["requests"]["memory"], _K8S_UNITS) <= parse_size(limit, _K8S_UNITS)
    config = yaml.safe_load(configmap["data"]["numaprobe.yaml"])
    assert parse_size(limit, _K8S_UNITS) >= budget_of(config) + HEADROOM, \
        "memory limit must cover memory.budget + 64Mi"


def test_ports_probes_and_args(container):
    ports = {p["name"]: p for p in container["ports"]}
    assert ports["metrics"]["containerPort"] == PORT
    args = container["args"]
    assert f"--web.listen-address=:{PORT}" in args
    assert f"--config.file={CONFIG_PATH}" in args, "args replace the image CMD"
    assert "--log.format=json" in args
    probes = {kind: container.get(kind) for kind in ("livenessProbe", "readinessProbe", "startupProbe")}
    for kind, probe in probes.items():
        if probe:
            assert probe["httpGet"]["port"] in ("metrics", PORT), kind
    assert probes["livenessProbe"]["httpGet"]["path"] == "/-/healthy"
    assert probes["readinessProbe"]["httpGet"]["path"] == "/-/ready"
    # /-/ready waits for a probe round (minutes): a probe that restarts the
    # container must not depend on it.
    if probes["startupProbe"]:
        startup = probes["startupProbe"]
        if startup["httpGet"]["path"] == "/-/ready":
            budget = startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
            assert budget >= 1800, "a startupProbe on /-/ready needs >= 30 min"
        else:
            assert startup["httpGet"]["path"] == "/-/healthy"


def test_config_and_state_mounts(pod, container, configmap):
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    config_dir, config_key = CONFIG_PATH.rsplit("/", 1)
    config_mounts = [m for m in mounts.values() if m["mountPath"] == config_dir]
    assert config_mounts and config_mounts[0].get("readOnly") is True
    assert volumes[config_mounts[0]["name"]]["configMap"]["name"] == configmap["metadata"]["name"]
    assert config_key in configmap["data"]
    config = yaml.safe_load(configmap["data"][config_key]) or {}
    state = config.get("state_directory", default_config()["state_directory"])
    state_mounts = [m for m in mounts.values() if m["mountPath"] == state]
    assert state_mounts, f"state_directory {state} is not a mounted volume (root filesystem is read-only)"
    # On the node, so the baseline survives pod re-creation and reboots.
    assert volumes[state_mounts[0]["name"]].get("hostPath") == {"path": state, "type": "DirectoryOrCreate"}
    assert not state_mounts[0].get("readOnly")
    lock_dir = os.path.dirname(config.get("probe_lock_file", default_config()["probe_lock_file"]))
    lock_mounts = [m for m in mounts.values() if m["mountPath"] == lock_dir]
    assert lock_mounts, f"probe_lock_file's directory {lock_dir} is not a mounted volume (root filesystem is read-only)"
    assert not lock_mounts[0].get("readOnly")


def test_configmap_config_passes_check_config(configmap, tmp_path):
    binary = numaprobe_bin()
    path = tmp_path / "numaprobe.yaml"
    path.write_text(configmap["data"]["numaprobe.yaml"])
    r = subprocess.run([binary, "check-config", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_image_config_passes_check_config():
    """The image carries config/numaprobe.yaml (the .deb's template); its build runs check-config on it."""
    binary = numaprobe_bin()
    r = subprocess.run([binary, "check-config", str(DEFAULT_CONFIG)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_podmonitor(daemonset, container):
    pm = load_k8s("podmonitor.yaml")
    assert (pm["apiVersion"], pm["kind"]) == ("monitoring.coreos.com/v1", "PodMonitor")
    pod_labels = daemonset["spec"]["template"]["metadata"]["labels"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    endpoints = pm["spec"]["podMetricsEndpoints"]
    assert endpoints[0]["port"] in {p["name"] for p in container["ports"]}
    assert endpoints[0].get("path", "/metrics") == "/metrics"
    # The alert rules and dashboards select job=~"numaprobe.*".
    job = pod_labels.get(pm["spec"].get("jobLabel"))
    assert job and job.startswith("numaprobe"), "job label would be <namespace>/<podmonitor>"


def test_make_prometheusrule(tmp_path):
    rule_files = [ROOT / "grafana" / "rules" / "recording.yaml", ROOT / "grafana" / "rules" / "alerts.yaml"]
    r = subprocess.run([sys.executable, str(K8S / "make-prometheusrule.py"), "--label", "release=kps"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rule = yaml.safe_load(r.stdout)
    assert (rule["apiVersion"], rule["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kps"
    expected = [g for f in rule_files for g in (yaml.safe_load(f.read_text()) or {}).get("groups", [])]
    assert rule["spec"]["groups"] == expected
    promtool = shutil.which("promtool")
    if promtool:
        extracted = tmp_path / "rules.yaml"
        extracted.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
        c = subprocess.run([promtool, "check", "rules", str(extracted)], capture_output=True, text=True)
        assert c.returncode == 0, c.stdout + c.stderr


# --- one convention across install methods ------------------------------------

def test_same_paths_everywhere(unit, runtime_stage, container):
    unit_config = [a.split("=", 1)[1] for a in shlex.split(last(unit, "Service", "ExecStart"))
                   if a.startswith("--config.file=")]
    image_config = [a.split("=", 1)[1] for a in exec_form(runtime_stage, "CMD") if a.startswith("--config.file=")]
    k8s_config = [a.split("=", 1)[1] for a in container["args"] if a.startswith("--config.file=")]
    assert unit_config == image_config == k8s_config == [CONFIG_PATH]
    assert f"/var/lib/{last(unit, 'Service', 'StateDirectory')}" == default_config()["state_directory"] == STATE_DIR


# --- the real daemon, started the way each install method starts it ----------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


def config_copy(text, tmp_path):
    """The config with state_directory moved under tmp_path (created, as
    StateDirectory= / the state-owner init container would make it)."""
    config = yaml.safe_load(text) or {}
    config["state_directory"] = str(tmp_path / "state")
    (tmp_path / "state").mkdir(mode=0o700)
    path = tmp_path / "numaprobe.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def localize(argv, binary, config, port):
    """argv as deployed, with the binary, config file and listen address local."""
    out = [binary if a == BINARY else a for a in argv]
    out = [f"--config.file={config}" if a.startswith("--config.file=") else a for a in out]
    out = [a for a in out if not a.startswith("--web.listen-address=")]
    return out + [f"--web.listen-address=127.0.0.1:{port}"]


class Notifications:
    """An sd_notify socket, like systemd's for a Type=notify service."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.path = str(path)
        self.seen = []  # every line received, in order

    def wait_for(self, message, timeout, since=None):
        """Index of the first `message` at or after `since` (default: after
        everything seen so far), waiting up to `timeout` seconds for it."""
        start = len(self.seen) if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            for i in range(start, len(self.seen)):
                if self.seen[i] == message:
                    return i
            start = len(self.seen)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {message} within {timeout}s; got {self.seen}")
            self.sock.settimeout(remaining)
            try:
                self.seen += self.sock.recv(4096).decode().splitlines()
            except socket.timeout:
                pass


def stop(proc, log):
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"SIGTERM did not stop numaprobe within 15 s:\n{log.read_text()}")
    assert rc == 0, f"exit {rc} on SIGTERM:\n{log.read_text()}"
    return time.monotonic() - t0


def test_systemd_unit_contract(unit, tmp_path):
    """ExecStart as the unit runs it (ARGS adding a listen address), with
    NOTIFY_SOCKET and WATCHDOG_USEC: READY=1, WATCHDOG=1, reload via
    SIGHUP (ExecReload), STOPPING=1 and exit 0 on SIGTERM."""
    binary = numaprobe_bin()
    port = free_port()
    config = config_copy(DEFAULT_CONFIG.read_text(), tmp_path)
    argv = shlex.split(last(unit, "Service", "ExecStart"))
    argv = [a for a in argv if a != "$ARGS"]
    notify = Notifications(tmp_path / "notify")
    env = dict(os.environ, NOTIFY_SOCKET=notify.path, WATCHDOG_USEC="2000000")
    log = tmp_path / "log"
    with open(log, "w") as out:
        proc = subprocess.Popen(localize(argv, binary, config, port), env=env, stdout=out, stderr=out)
    try:
        notify.wait_for("READY=1", 30, since=0)
        assert http_get(port, "/-/healthy")[0] == 200, "READY=1 before the listener is up"
        # The scheduler loop's first WATCHDOG=1 may precede READY=1. (Later ones
        # wait for the running probe, which SCHED_IDLE can stretch on a busy
        # host: not asserted here, see deploy/README.md "Known issues".)
        notify.wait_for("WATCHDOG=1", 30, since=0)
        proc.send_signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING=1", 10)
        notify.wait_for("READY=1", 10, since=reloading)
        took = stop(proc, log)
        notify.wait_for("STOPPING=1", 1, since=reloading)
        timeout_stop = parse_duration(last(unit, "Service", "TimeoutStopSec") or "90s")
        assert took < timeout_stop, f"stopping took {took:.1f}s, more than TimeoutStopSec"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _image_argv(runtime):
    return exec_form(runtime, "ENTRYPOINT") + exec_form(runtime, "CMD")


@pytest.mark.parametrize("method", ["image", "kubernetes"])
def test_container_args_contract(method, runtime_stage, pod, container, configmap, tmp_path):
    """ENTRYPOINT + CMD (docker run) and ENTRYPOINT + DaemonSet args, with the
    config each ships: starts, serves the probed paths, logs JSON if asked,
    stops with 0 on SIGTERM (PID 1 in the container)."""
    binary = numaprobe_bin()
    port = free_port()
    if method == "image":
        argv = _image_argv(runtime_stage)
        config = config_copy(DEFAULT_CONFIG.read_text(), tmp_path)
    else:
        argv = exec_form(runtime_stage, "ENTRYPOINT") + container["args"]
        config = config_copy(configmap["data"]["numaprobe.yaml"], tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    log = tmp_path / "log"
    with open(log, "w") as out:
        proc = subprocess.Popen(localize(argv, binary, config, port), env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 30
        while http_get(port, "/-/healthy")[0] != 200:
            assert proc.poll() is None, f"exited {proc.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"/-/healthy not 200 within 30s:\n{log.read_text()}"
            time.sleep(0.1)
        assert http_get(port, "/-/ready")[0] in (200, 503)
        status, body = http_get(port, "/metrics")
        assert status == 200 and "numaprobe_" in body
        took = stop(proc, log)
        if method == "kubernetes":
            grace = pod.get("terminationGracePeriodSeconds", 30)
            assert took < grace, f"stopping took {took:.1f}s, more than terminationGracePeriodSeconds"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if "--log.format=json" in argv:
        lines = [line for line in log.read_text().splitlines() if line.strip()]
        assert lines, "no log output"
        for line in lines:
            json.loads(line)
