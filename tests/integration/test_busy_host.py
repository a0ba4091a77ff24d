# SPDX-License-Identifier: Apache-2.0
"""Figures on a busy host: a probe whose planned CPU is kept busy by
another process measures from an idle CPU of the same node, and says which.

The busy loop here is a real process pinned to the planned CPU (the node's
highest). Whether another CPU of the node is idle depends on what else the
machine runs (CI hosts are shared), so each run is judged by /proc/stat read
around it: where another CPU of the node was mostly idle, the probe must have
moved there and produced a figure; where none was, the run proves nothing and
is counted, not asserted (the test says so, and needs at least one judged run).
"""
import json
import os
import subprocess
import sys
import time

import pytest

QUICK = ["--samples", "5"]


def node0_cpus():
    base = "/sys/devices/system/node/node0/cpulist"
    try:
        text = open(base).read().strip()
    except OSError:
        return sorted(os.sched_getaffinity(0))
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return [c for c in cpus if c in os.sched_getaffinity(0)]


def cpu_ticks():
    ticks = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                name, *v = line.split()
                v = [int(x) for x in v[:8]]
                busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
                ticks[int(name[3:])] = (busy, busy + v[3] + v[4])
    return ticks


def idle_share(before, after, cpu):
    busy = after[cpu][0] - before[cpu][0]
    total = after[cpu][1] - before[cpu][1]
    return 1 - busy / total if total > 0 else 0.0


@pytest.fixture
def busy_loop():
    def start(cpu):
        code = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
        return subprocess.Popen([sys.executable, "-c", code])
    procs = []
    yield lambda cpu: procs.append(start(cpu)) or procs[-1]
    for p in procs:
        p.kill()
        p.wait()


def test_probe_moves_off_a_busy_planned_cpu(run, tmp_path, busy_loop):
    cpus = node0_cpus()
    if len(cpus) < 2:
        pytest.skip("node 0 has one allowed CPU: nothing to move to")
    planned = max(cpus)
    others = [c for c in cpus if c != planned]
    busy_loop(planned)
    judged = 0
    for _ in range(8):
        # Idleness is judged just before the run: during it the probe itself
        # keeps the CPU it chose busy.
        before = cpu_ticks()
        time.sleep(0.3)
        after = cpu_ticks()
        r = run("probe", "--tests", "latency", "--format", "json", "--lock-file", str(tmp_path / "lock"), *QUICK)
        assert r.returncode in (0, 1), r.stderr
        rec = json.loads(r.stdout)["latency"][0]
        assert rec["planned_cpu"] == planned, rec
        assert rec["cpu"] in cpus, f"measured from cpu {rec['cpu']}, outside node 0 {cpus}"
        idlest = max(idle_share(before, after, c) for c in others)
        if idlest < 0.8:
            print(f"not judged: no other CPU of node 0 was idle just before the run (best {idlest:.0%})")
            continue
        judged += 1
        assert rec["cpu"] != planned, (
            f"cpu {planned} was kept busy and cpu(s) {others} up to {idlest:.0%} idle, yet the probe stayed: {rec}")
        assert rec["outcome"] == "ok", f"an idle CPU was available and the probe still failed: {rec}"
        assert "instead of cpu" in r.stderr, r.stderr  # the log names the move
        if judged >= 3:
            break
    if judged == 0:
        # Every CPU was busy (a shared CI host): the move cannot be judged here.
        # The choice itself is unit-tested (tests/daemon/cpu_chooser_test.cc).
        pytest.skip("every CPU of node 0 was busy before each of 8 runs: the move could not be judged")


def test_named_cpu_is_never_moved(run, tmp_path, busy_loop):
    cpus = node0_cpus()
    if len(cpus) < 2:
        pytest.skip("node 0 has one allowed CPU")
    planned = max(cpus)
    busy_loop(planned)
    r = run("probe", "--tests", "latency", "--cpus", str(planned), "--format", "json",
            "--lock-file", str(tmp_path / "lock"), *QUICK)
    assert r.returncode in (0, 1), r.stderr
    rec = json.loads(r.stdout)["latency"][0]
    assert rec["cpu"] == planned, f"--cpus {planned} was not honoured: {rec}"
    if rec["outcome"] != "ok":
        # Beside a busy loop on the same CPU a sample can be preempted; only
        # then is a disturbed run acceptable.
        assert rec["outcome"] == "disturbed" and rec["discards"]["context_switch"] > 0, rec
