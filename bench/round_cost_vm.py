#!/usr/bin/env python3
"""What one probe round costs on 2-, 4-, 8- and 16-node hosts (issue 9 item 3).

Boots a QEMU guest per topology (tests/vm/vmharness.py; TCG, since KVM does not
boot on this project's machines, see docs/performance.md), and reads the
default probe plan there (`numaprobe topology --format json`): memory pairs and
core-to-core pairs per round. Under TCG a probe's CPU time is the emulator's,
so the CPU cost per round is the plan's probe count times the CPU per estimate
measured on real hardware (COST_MS, docs/performance.md "Cost per estimate");
the round duration at the default budget is that / duty_cycle.

    python3 bench/round_cost_vm.py build/release/numaprobe 2 4 8 16
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vmharness as vh  # noqa: E402

SCRIPT = """\
run plan numaprobe topology --format json
"""

# CPU milliseconds per estimate at the default settings, from docs/performance.md
# "Cost per estimate" (this project's 2-vCPU host, quiet moments, typical values):
# latency 44-45, read 5.5-7, NT write 5.6-6.1, copy 11-17, core-to-core 2.2-3.0
# within a node and 13-37 for a ~200 ns (cross-socket-like) pair.
COST_MS = {"latency": 45.0, "read": 6.5, "write": 6.0, "copy": 14.0, "c2c_near": 3.0, "c2c_cross": 25.0}
DUTY = 0.002  # default schedule.duty_cycle
INTERVAL_S = 300  # default schedule.interval

def topology(nodes: int) -> vh.VmTopology:
    # Two CPUs and 1 GiB per node (the latency buffer is sized from the LLC, the
    # bandwidth buffer is 256 MiB, memory.budget 1 GiB); distances as on a
    # glueless multi-socket box: 10 local, 21 one hop, 31 two hops.
    # 16 nodes get one CPU each: 32 vCPUs under single-threaded TCG did not boot
    # within 220 s on the loaded build host (the memory pairs do not depend on it).
    mem = 1024 if nodes <= 8 else 640
    cpus = 2 if nodes <= 8 else 1
    dist = {(a, b): 21 if (b - a) <= 1 or nodes <= 4 else 31 for a in range(nodes) for b in range(a + 1, nodes)}
    return vh.VmTopology(f"cost{nodes}", tuple(vh.VmNode(cpus, mem) for _ in range(nodes)), dist)


def main() -> int:
    binary = Path(sys.argv[1])
    accel = os.environ.get("NUMAPROBE_VM_ACCEL") or "tcg,thread=single"
    print(f"accelerator: {accel}; CPU ms per estimate: {COST_MS}")
    print("| nodes | CPUs | memory pairs | core-to-core pairs | probes per round | probe CPU s per round "
          "| round at duty_cycle 0.002 | refresh of one pair |")
    print("|---|---|---|---|---|---|---|---|")
    for nodes in [int(a) for a in sys.argv[2:]]:
        topo = topology(nodes)
        res = vh.boot(topo, [vh.Scenario("plan", SCRIPT, timeout=120)], binary=binary)["plan"]
        plan = res.json("plan")["plan"]
        pairs = len(plan["memory_pairs"])
        c2c = plan["c2c_pairs"]
        cross = sum(1 for p in c2c if p["relation"] == "cross_node")
        probes = pairs * 4 + len(c2c)  # latency + read, write, copy per memory pair
        cpu = (pairs * (COST_MS["latency"] + COST_MS["read"] + COST_MS["write"] + COST_MS["copy"]) +
               cross * COST_MS["c2c_cross"] + (len(c2c) - cross) * COST_MS["c2c_near"]) / 1000
        round_s = cpu / DUTY
        print(f"| {nodes} | {topo.n_cpus} | {pairs} | {len(c2c)} | {probes} | {cpu:.2f} | {round_s / 60:.1f} min "
              f"| {max(round_s, INTERVAL_S) / 60:.1f} min |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
