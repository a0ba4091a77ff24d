#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What one probe round costs on 2-, 4-, 8- and 16-node hosts,
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

With NUMAPROBE_PLAN_DIR set, each guest's `topology --format json` is kept
there as plan<N>.json and reused by later runs (the plan does not depend on
the costs; booting a 16-node guest under TCG takes minutes).
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
OPS = ("read", "write", "copy")  # default probes.bandwidth.ops (as the log names them)


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


def guest_plan(topo: vh.VmTopology, binary: Path, nodes: int) -> dict:
    """`numaprobe topology --format json` inside a guest of `topo`."""
    keep = Path(os.environ["NUMAPROBE_PLAN_DIR"]) / f"plan{nodes}.json" if os.environ.get("NUMAPROBE_PLAN_DIR") else None
    if keep and keep.exists():
        return json.loads(keep.read_text())
    res = vh.boot(topo, [vh.Scenario("plan", SCRIPT, timeout=120)], binary=binary)["plan"]
    report = res.json("plan")
    if keep:
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text(json.dumps(report))
    return report


ROTATE_ABOVE = 2.0  # daemon/serve/rotation.h kRotateAbove


def round_tasks(plan: dict, node_of: dict) -> list[tuple]:
    """RoundTasks: (kind, cpu_node, mem_node, variant, c2c class) per task, kind by kind,
    memory nodes ascending (stable)."""
    memory = [(p["cpu_node"], p["mem_node"]) for p in plan["memory_pairs"]]
    tasks = []
    for kind, variants in (("latency", ("",)), ("bandwidth", OPS)):
        tasks += sorted([(kind, c, m, v, "") for c, m in memory for v in variants], key=lambda t: t[2])
    tasks += sorted([("core_to_core", node_of[p["cpu_a"]], p["line_node"], "", p["relation"])
                     for p in plan["c2c_pairs"]], key=lambda t: t[2])
    return tasks


def shares_buffers(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and a[2] == b[2]


def cost(tasks: list[tuple], start: dict, more: dict) -> float:
    """TaskCostEstimate::Of: a visit's first task with its preparation, the others without."""
    return sum(start[t[0]] if i == 0 or not shares_buffers(tasks[i - 1], t) else more[t[0]]
               for i, t in enumerate(tasks))


def split(tasks: list[tuple], matrix) -> tuple[list[int], list[list[int]]]:
    """SplitRound: the first pair of each (kind, distance, relation) with its variants every
    round; the rest in whole visits."""
    first, every, rotated = {}, [], []
    for i, t in enumerate(tasks):
        key = (t[0], matrix[t[1]][t[2]], t[4])
        rep = first.setdefault(key, i)
        if rep == i or tasks[rep][:3] == t[:3]:
            every.append(i)
        elif rotated and rotated[-1][-1] == i - 1 and shares_buffers(tasks[i - 1], t):
            rotated[-1].append(i)
        else:
            rotated.append([i])
    return every, rotated


def main() -> int:
    binary, costs = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    later, first = costs["later_ms"], costs["first_of_visit_ms"]
    more = {"latency": later["latency"] / 1000, "bandwidth": sum(later[f"bandwidth/{op}"] for op in OPS) / 3000,
            "core_to_core": later.get("core-to-core", first["core-to-core"]) / 1000}
    start = {"latency": first["latency"] / 1000, "bandwidth": first["bandwidth/read"] / 1000 + more["bandwidth"]
             - later["bandwidth/read"] / 1000, "core_to_core": first["core-to-core"] / 1000}
    budget = DUTY * INTERVAL_S
    accel = os.environ.get("NUMAPROBE_VM_ACCEL") or "tcg,thread=single"
    print(f"accelerator: {accel}; CPU s per task starting a visit: {start}; continuing one: {more}")
    print("| nodes | memory pairs | c2c pairs | representatives (tasks) | visits | CPU s per full round: "
          "buffers per pair / per node | full round lasts | rotation rounds | CPU s per rotated round "
          "| representatives refresh | every pair refreshes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for nodes in [int(a) for a in sys.argv[3:]]:
        topo = topology(nodes)
        report = guest_plan(topo, binary, nodes)
        plan, matrix = report["plan"], report["distances"]["matrix"]
        node_of = {c["id"]: c["node"] for c in report["cpus"]}
        tasks = round_tasks(plan, node_of)
        full = cost(tasks, start, more)
        per_pair = sum(start[t[0]] if t[3] in ("", "read") else more[t[0]] for t in tasks)
        every, rotated = split(tasks, matrix)
        rounds = 1
        if rotated and full > ROTATE_ABOVE * budget:
            rot = sum(cost([tasks[i] for i in v], start, more) for v in rotated)
            room = max(ROTATE_ABOVE * budget - cost([tasks[i] for i in every], start, more), budget)
            rounds = int(min(max(math.ceil(rot / room), 1), len(rotated)))
        n = len(rotated)
        durations, cpus = [], []
        for r in range(rounds):
            which = sorted(every + [i for v in rotated[r * n // rounds:(r + 1) * n // rounds] for i in v])
            c = cost([tasks[i] for i in which], start, more)
            cpus.append(c)
            durations.append(max(INTERVAL_S, c / DUTY))
        visits = sum(1 for i, t in enumerate(tasks) if i == 0 or not shares_buffers(tasks[i - 1], t))
        print(f"| {nodes} | {len(plan['memory_pairs'])} | {len(plan['c2c_pairs'])} | {len(every)} | {visits} | "
              f"{per_pair:.2f} / {full:.2f} | {max(INTERVAL_S, full / DUTY) / 60:.1f} min | {rounds} | "
              f"{sum(cpus) / rounds:.2f} | {sum(durations) / rounds / 60:.1f} min | {sum(durations) / 60:.1f} min |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
