#!/usr/bin/env python3
"""What one probe round costs on 2-, 4-, 8- and 16-node hosts (issue 9 item 3),
and what the schedule makes of it at the default budget.

Boots a QEMU guest per topology (tests/vm/vmharness.py; TCG, since KVM does not
boot on this project's machines, see docs/performance.md), and reads the
default probe plan there (`numaprobe topology --format json`): memory pairs,
core-to-core pairs and the firmware distances. Under TCG a probe's CPU time is
the emulator's, so the CPU comes from bench/task_cost.py on real hardware
(per task, and per buffer preparation, at the default settings). From them:
- a full round's CPU with buffers prepared per pair (before) and per memory
  node and kind (now: RoundTasks groups a node's pairs into one visit);
- the rotation the daemon picks at duty_cycle 0.002 x interval 300 s
  (the formula of daemon/serve/rotation.cc RotationRounds, on the per-kind
  average task cost of a full round, as the daemon's estimate is), the CPU of
  one of its rounds, and how often a representative and a rotated pair get a
  new figure.

    python3 bench/task_cost.py build/release/numaprobe > /tmp/costs.json
    python3 bench/round_cost_vm.py build/release/numaprobe /tmp/costs.json 2 4 8 16
"""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vmharness as vh  # noqa: E402

SCRIPT = """\
run plan numaprobe topology --format json
"""

DUTY = 0.002  # default schedule.duty_cycle
INTERVAL_S = 300  # default schedule.interval
OPS = ("read", "ntwrite", "copy")  # default probes.bandwidth.ops


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


def rotation_rounds(every_s: float, rotated_s: float, rotated_pairs: int, budget_s: float) -> int:
    """daemon/serve/rotation.cc RotationRounds."""
    if rotated_pairs == 0 or every_s + rotated_s <= budget_s:
        return 1
    room = max(budget_s - every_s, budget_s / 4)
    return int(min(max(math.ceil(rotated_s / room), 1), rotated_pairs))


def main() -> int:
    binary, costs = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    lat = costs["later_ms"]["latency"] / 1000
    bw = sum(costs["later_ms"][f"bandwidth/{op}"] for op in OPS) / 1000  # the 3 ops of one pair
    prep_lat, prep_bw = costs["prep_ms"]["latency"] / 1000, costs["prep_ms"]["bandwidth"] / 1000
    c2c_s = costs["later_ms"].get("core-to-core", costs["first_of_visit_ms"].get("core-to-core", 0)) / 1000
    budget = DUTY * INTERVAL_S
    accel = os.environ.get("NUMAPROBE_VM_ACCEL") or "tcg,thread=single"
    print(f"accelerator: {accel}; CPU s per task: latency {lat:.4f}, bandwidth (3 ops) {bw:.4f}, core-to-core "
          f"{c2c_s:.4f}; per visit: latency buffer {prep_lat:.4f}, bandwidth buffer {prep_bw:.4f}")
    print("| nodes | memory pairs | c2c pairs | classes (memory + c2c) | CPU s per full round, buffers per pair | per node | "
          "rotation rounds | CPU s per rotated round | representatives refresh | every pair refreshes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for nodes in [int(a) for a in sys.argv[3:]]:
        topo = topology(nodes)
        res = vh.boot(topo, [vh.Scenario("plan", SCRIPT, timeout=120)], binary=binary)["plan"]
        report = res.json("plan")
        plan, matrix = report["plan"], report["distances"]["matrix"]
        pairs = [(p["cpu_node"], p["mem_node"]) for p in plan["memory_pairs"]]
        mem_nodes = {m for _, m in pairs}
        node_of = {c["id"]: c["node"] for c in report["cpus"]}
        c2c = len(plan["c2c_pairs"])
        c2c_classes = {(matrix[node_of[p["cpu_a"]]][p["line_node"]], p["relation"]) for p in plan["c2c_pairs"]}
        measure = len(pairs) * (lat + bw) + c2c * c2c_s
        before = measure + len(pairs) * (prep_lat + prep_bw)
        full = measure + len(mem_nodes) * (prep_lat + prep_bw)
        # Representatives: the first pair (in memory-node order) of each distance, per kind.
        reps = {}
        for c, m in sorted(pairs, key=lambda p: p[1]):
            reps.setdefault(matrix[c][m], (c, m))
        n_rotated = len(pairs) - len(reps)
        c2c_rotated = c2c - len(c2c_classes)
        # The daemon's estimate: per-kind average task cost of the first (full) cycle.
        avg_lat = lat + len(mem_nodes) * prep_lat / len(pairs)
        avg_bw = bw + len(mem_nodes) * prep_bw / len(pairs)
        every_est = len(reps) * (avg_lat + avg_bw) + len(c2c_classes) * c2c_s
        rotated_est = n_rotated * (avg_lat + avg_bw) + c2c_rotated * c2c_s
        rounds = rotation_rounds(every_est, rotated_est, 2 * n_rotated + c2c_rotated, budget)
        # What a rotated round costs (about: a slice's memory nodes may also hold a
        # representative): the representatives, one visit per memory node among them,
        # plus a contiguous slice of the rest, one visit per memory node it spans.
        rep_cpu = len(reps) * (lat + bw) + len({m for _, m in reps.values()}) * (prep_lat + prep_bw) + \
            len(c2c_classes) * c2c_s
        slice_pairs = n_rotated / rounds
        slice_nodes = min(len(mem_nodes), math.ceil(slice_pairs / max(1, len(pairs) // len(mem_nodes))) + 1)
        round_cpu = rep_cpu + slice_pairs * (lat + bw) + slice_nodes * (prep_lat + prep_bw) + \
            c2c_rotated / rounds * c2c_s
        if rounds == 1:
            round_cpu = full
        round_s = max(INTERVAL_S, round_cpu / DUTY)
        print(f"| {nodes} | {len(pairs)} | {c2c} | {len(reps)} + {len(c2c_classes)} | {before:.2f} | {full:.2f} | {rounds} | "
              f"{round_cpu:.2f} | {round_s / 60:.1f} min | {rounds * round_s / 60:.1f} min |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
