# SPDX-License-Identifier: Apache-2.0
"""The daemon's peak bandwidth (probes.peak_bandwidth.enabled): it runs at
start on a schedule of its own, publishes the node's peak and how many CPUs
streamed, and its idle gate skips a busy node with a counted, logged result.
Real daemon on this machine (one NUMA node: its own memory only; the QEMU
guests prove the pairs on several nodes, tests/vm/test_vm_numa.py).
Structure is asserted, never a figure's size."""
import os
import re
import subprocess
import sys

import pytest

from daemon import Daemon, SANITIZED_SLOWDOWN
from test_peak_bandwidth import reserved_cpus

# The round kinds off: the test is about the kind on its own schedule, and a
# round's SCHED_IDLE probes beside the busy loops below would take minutes.
CONFIG = """\
probes:
  latency: {{enabled: false}}
  bandwidth: {{enabled: false}}
  core_to_core: {{enabled: false}}
  peak_bandwidth: {{enabled: true, interval: 6h, duty_cycle: 0.5, max_busy: {max_busy}, buffer_size: 16MiB,
                   burst_size: 4MiB, bursts: 3}}
schedule: {{interval: 1s, jitter: 0.1, priority: {priority}}}
memory: {{budget: 512MiB}}
baseline: {{rounds: 1}}
state_directory: {state}
probe_lock_file: {lock}
"""


def write(tmp_path, max_busy, priority="idle"):
    path = tmp_path / "numaprobe.yaml"
    path.write_text(CONFIG.format(max_busy=max_busy, priority=priority, state=tmp_path / "state",
                                  lock=tmp_path / "probe.lock"))
    return str(path)


def samples(body, family):
    """{labels text: value} of one family's series."""
    out = {}
    for line in body.splitlines():
        m = re.match(rf"{family}(\{{[^}}]*\}})? (\S+)$", line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def runs(body, result=None):
    total = 0
    for labels, value in samples(body, "numaprobe_probe_runs_total").items():
        if 'probe="peak_bandwidth"' in labels and (result is None or f'result="{result}"' in labels):
            total += value
    return total


def usable_cpus():
    """This process's CPUs but isolated and nohz_full ones (probing/cpu_chooser.h)."""
    return set(os.sched_getaffinity(0)) - reserved_cpus()


def test_runs_at_start_and_publishes_the_peak_of_every_cpu(numaprobe_bin, tmp_path):
    """Gate off (max_busy 1): the first cycle runs at start, read and write of
    node 0's memory from every usable CPU; the figure is labelled like its
    baseline, and the threads family counts the CPUs. A machine busy enough to
    disturb every burst gives `disturbed`, accepted only with its discards
    counted."""
    with Daemon(numaprobe_bin, write(tmp_path, max_busy=1)) as d:
        d.wait_for(lambda: runs(d.metrics()) - runs(d.metrics(), "cancelled") >= 2, timeout=120 * SANITIZED_SLOWDOWN,
                   what="both peak runs")
        logs = d.logs()
        assert re.search(r"peak_bandwidth: 2 runs every 6h \(at once while its baseline records\), within 50% of one "
                         r"CPU of its own", logs), logs
        assert "runs per round: none" in logs, "peak bandwidth is not in the rounds"
        body = d.metrics()
        assert runs(body, "skipped") == 0, body
        figures = samples(body, "numaprobe_memory_peak_bandwidth_bytes_per_second")
        threads = samples(body, "numaprobe_memory_peak_bandwidth_threads")
        for op in ("read", "write"):
            labels = f'{{cpu_node="0",mem_node="0",op="{op}"}}'
            if runs(body, "ok") >= 2 or labels in figures:
                assert figures[labels] > 0, body
                assert threads[labels] == len(usable_cpus()), body
        if runs(body, "ok") < 2:
            discarded = sum(v for k, v in samples(body, "numaprobe_samples_discarded_total").items()
                            if 'probe="peak_bandwidth"' in k)
            assert runs(body, "disturbed") + runs(body, "ok") >= 2 and discarded > 0, body
        else:
            # baseline.rounds 1: each series armed by its first figure.
            baseline = samples(body, "numaprobe_memory_peak_bandwidth_baseline_bytes_per_second")
            assert set(baseline) == set(figures), body
        assert samples(body, "numaprobe_probe_cpu_seconds_total")['{probe="peak_bandwidth"}'] > 0, body


def test_the_idle_gate_skips_a_busy_node_and_counts_it(numaprobe_bin, tmp_path):
    """Every usable CPU kept busy by a loop at normal priority: node 0 is far
    above the 50% gate on any machine, so each run is skipped, counted as
    result="skipped", logged with the busy share, and no figure is published."""
    loops = [subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"])
             for cpu in sorted(usable_cpus())]
    try:
        with Daemon(numaprobe_bin, write(tmp_path, max_busy=0.5, priority="nice19")) as d:
            d.wait_for(lambda: runs(d.metrics(), "skipped") >= 2, timeout=120 * SANITIZED_SLOWDOWN,
                       what="two skipped peak runs")
            body = d.metrics()
            assert samples(body, "numaprobe_memory_peak_bandwidth_bytes_per_second") == {}, body
            logs = d.logs()
            m = re.search(r"peak (read|write) bandwidth node 0 -> node 0: skipped: node 0: its (\d+) CPUs? were (\d+)% "
                          r"busy over the last 1000 ms, above the idle gate of 50% \(probes\.peak_bandwidth\.max_busy\)",
                          logs)
            assert m, logs
            assert int(m.group(2)) == len(usable_cpus()) and int(m.group(3)) > 50, m.group(0)
    finally:
        for p in loops:
            p.kill()
            p.wait()
