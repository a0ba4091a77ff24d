# SPDX-License-Identifier: Apache-2.0
"""A task limit is an operating condition, not a crash (docs/security.md,
"Task limits"). The daemon runs with a budget of 24 tasks, as a non-root user
under RLIMIT_NPROC and inside a cgroup with pids.max: it starts, completes
probe rounds and serves. And when the limit is reached while a probe that
needs several threads starts them (the cgroup's pids.max lowered under the
running daemon), that probe is skipped with a counted `thread_limit` run and
a log line naming the limit; the daemon goes on serving and probing once
tasks are free again.

RLIMIT_NPROC counts the tasks of a user, and root ignores it: the daemon runs
under a user id of its own (no other process shares it), on files it can
read. The cgroup test needs a pids controller it can create a group in (root
on cgroup v2, or v1's pids hierarchy on hybrid hosts); CI runs as root and
must not skip it."""
import os
import re
import resource
import shutil
import tempfile
import time

import pytest

from daemon import SANITIZED_SLOWDOWN, Daemon, parse_metrics, readable_sanitizer_options, write_config

TASK_BUDGET = 24
# The process's own threads between probes (tests/integration/test_serve.py
# asserts the same bound on the unlimited daemon).
MAX_IDLE_THREADS = 8


def own_uid():
    """A user id no process on this host runs as, so RLIMIT_NPROC counts the daemon's tasks only."""
    return 61000 + os.getpid() % 4000


@pytest.fixture
def shared_dir():
    """A directory the unprivileged daemon can read its config from and write its state into."""
    path = tempfile.mkdtemp(prefix="numaprobe-tasks-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_user(uid, nproc):
    """preexec_fn: RLIMIT_NPROC, then drop root for `uid` (so the limit applies)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return apply


def unprivileged_daemon(numaprobe_bin, directory, nproc):
    if os.geteuid() != 0:
        pytest.skip("needs root to run the daemon under a user id of its own")
    uid = own_uid()
    config = write_config(directory, duty_cycle=0.2, interval="1s")
    os.makedirs(os.path.join(directory, "state"), exist_ok=True)
    for path in (directory, os.path.join(directory, "state")):
        os.chown(path, uid, uid)
    os.chmod(config, 0o644)
    # The build may sit where only root can enter (a clone in `mktemp -d`,
    # mode 0700): the user runs a copy of the binary it can read.
    binary = os.path.join(directory, "numaprobe")
    shutil.copy2(numaprobe_bin, binary)
    os.chmod(binary, 0o755)
    return Daemon(binary, config, env=readable_sanitizer_options(directory), preexec_fn=as_user(uid, nproc))


def threads_of(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"Threads:\s+(\d+)", f.read()).group(1))


def fewest_threads(pid, samples=40):
    """The process's thread count between probes: the least over a few seconds of samples."""
    counts = []
    for _ in range(samples):
        counts.append(threads_of(pid))
        time.sleep(0.05)
    return min(counts)


def runs(metrics_text, result):
    """{probe: numaprobe_probe_runs_total with `result`}."""
    return {labels["probe"]: value for labels, value in parse_metrics(metrics_text).get("numaprobe_probe_runs_total", [])
            if labels["result"] == result}


def latency_measured(metrics_text):
    """(ok, disturbed) latency runs: a run that measured, whether or not the
    machine let it give a figure."""
    return (runs(metrics_text, "ok").get("latency", 0), runs(metrics_text, "disturbed").get("latency", 0))


def check_serves_and_probes(d):
    d.wait_ready()
    d.wait_for(lambda: all(runs(d.metrics(), "ok").get(p, 0) >= 2 for p in ("latency", "bandwidth")),
               what="two ok latency and bandwidth runs")
    status, _, body = d.get("/metrics")
    assert status == 200 and "numaprobe_build_info" in body
    assert fewest_threads(d.proc.pid) <= MAX_IDLE_THREADS
    assert d.proc.poll() is None, d.logs()
    assert "terminate called" not in d.logs()


def test_serves_and_probes_under_rlimit_nproc(numaprobe_bin, shared_dir):
    with unprivileged_daemon(numaprobe_bin, shared_dir, TASK_BUDGET) as d:
        check_serves_and_probes(d)


def pids_controller():
    """(directory to create groups in, version) of a pids controller this process can use, or None."""
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        try:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                if "pids" in f.read().split():
                    return root, 2
        except OSError:
            pass
    if os.path.exists("/sys/fs/cgroup/pids/pids.current") or os.path.exists("/sys/fs/cgroup/pids/cgroup.procs"):
        return "/sys/fs/cgroup/pids", 1
    return None


@pytest.fixture
def pids_cgroup():
    """A fresh cgroup with pids.max = TASK_BUDGET; removed afterwards."""
    found = pids_controller() if os.geteuid() == 0 else None
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs as root on a host with a pids controller: this test must run there")
        pytest.skip("no pids cgroup controller this user can create a group in")
    root, version = found
    if version == 2:
        with open(os.path.join(root, "cgroup.subtree_control"), "w") as f:
            f.write("+pids")
    path = os.path.join(root, f"numaprobe-test-{os.getpid()}")
    os.mkdir(path)
    with open(os.path.join(path, "pids.max"), "w") as f:
        f.write(str(TASK_BUDGET))
    yield path
    for _ in range(50):  # the group empties once the daemon is reaped
        try:
            os.rmdir(path)
            break
        except OSError:
            time.sleep(0.1)


def test_serves_and_probes_under_cgroup_pids_max(numaprobe_bin, tmp_path, pids_cgroup):
    def enter():
        with open(os.path.join(pids_cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    with Daemon(numaprobe_bin, write_config(str(tmp_path), duty_cycle=0.2, interval="1s"), preexec_fn=enter) as d:
        check_serves_and_probes(d)
        with open(os.path.join(pids_cgroup, "pids.current")) as f:
            assert int(f.read()) <= TASK_BUDGET


def test_limit_reached_while_a_probe_starts_its_threads(numaprobe_bin, tmp_path, pids_cgroup):
    """Core-to-core needs two threads: with room in the cgroup for exactly one
    more task than the daemon has between probes, its first ping-pong thread
    starts and its second cannot. (Latency, one measuring thread, still runs.)"""
    def enter():
        with open(os.path.join(pids_cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def set_max(value):
        with open(os.path.join(pids_cgroup, "pids.max"), "w") as f:
            f.write(str(value))

    with Daemon(numaprobe_bin, write_config(str(tmp_path), duty_cycle=0.2, interval="1s"), preexec_fn=enter) as d:
        d.wait_ready()
        idle = fewest_threads(d.proc.pid)
        set_max(idle + 1)
        before = latency_measured(d.metrics())
        d.wait_for(lambda: runs(d.metrics(), "thread_limit").get("core_to_core", 0) >= 1,
                   what="a core-to-core run counted as thread_limit")
        d.wait_for(lambda: sum(latency_measured(d.metrics())) > sum(before), what="latency still measured")
        body = d.metrics()
        if runs(body, "ok").get("latency", 0) <= before[0]:
            # Its one thread ran and measured, on a CPU too busy for a figure:
            # `disturbed`, accepted only with its discarded samples counted.
            discarded = sum(v for labels, v in parse_metrics(body).get("numaprobe_samples_discarded_total", [])
                            if labels["probe"] == "latency")
            assert discarded > 0, body
            print(f"the machine was busy: latency ran disturbed ({discarded:.0f} samples discarded)")
        line = next(l for l in d.logs().splitlines() if "thread_limit" in l and "core-to-core" in l)
        assert "cannot create ping-pong thread 2 of 2" in line, line
        assert f"cgroup pids.max {idle + 1}" in line, line
        assert d.get("/-/healthy")[0] == 200
        # Tasks free again: core-to-core measures again.
        set_max(TASK_BUDGET)
        limited = runs(d.metrics(), "ok").get("core_to_core", 0)
        d.wait_for(lambda: runs(d.metrics(), "ok").get("core_to_core", 0) > limited,
                   timeout=60 * SANITIZED_SLOWDOWN, what="core-to-core ok again")
        assert d.proc.poll() is None and "terminate called" not in d.logs()
