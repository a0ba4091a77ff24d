#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The schedule on big hosts, before and after the results model, side by side
on the same plans and task costs (docs/performance.md, "Round cost on big hosts").

Plans: the hwloc XML of QEMU guests (tests/fixtures/topology/, 64 CPUs each),
planned by `numaprobe topology` under HWLOC_XMLFILE. Costs: a task-cost file
(tests/fixtures/task_costs/measured.json: CPU seconds per task, a visit's
first task with its buffer preparation and a task continuing it).

- now: the sizing preview, `numaprobe topology --config.file DEFAULT
  --task-costs COSTS --format json`: the real scheduler and results model on
  a simulated clock at the default configuration.
- before: the schedule of the release before, computed from the same plan
  and costs with its rules (daemon/serve/rotation.cc as it was): the first
  cycle a full round at schedule.duty_cycle (task costs unknown until
  measured); then rotation at 2 x duty_cycle x interval a round; the baseline
  from 15 complete cycles; a restart kept a complete baseline but no recent
  figures (5 figures a series before drift is checked again) and started a
  recording in progress over.

    python3 bench/big_host_schedule.py build/release/numaprobe tests/fixtures/task_costs/measured.json \\
        tests/fixtures/topology/8node_2s_snc4.xml tests/fixtures/topology/16node_4s_snc4.xml
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The round's task order and which tasks share buffers, as the VM round-cost
# bench works them out (bench/ is on the path when a bench script runs).
from round_cost_vm import round_tasks, shares_buffers  # noqa: E402

DUTY = 0.002       # schedule.duty_cycle
INTERVAL_S = 300   # schedule.interval
ROUNDS = 15        # baseline.rounds
ROTATE_ABOVE = 2.0


def topology_json(binary: Path, xml: Path, *extra: str) -> dict:
    env = dict(os.environ, HWLOC_XMLFILE=str(xml))
    out = subprocess.run([str(binary), "topology", "--format", "json", *extra], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def tasks_of(report: dict) -> list[tuple]:
    """RoundTasks of a `numaprobe topology --format json` report."""
    return round_tasks(report["plan"], {c["id"]: c["node"] for c in report["cpus"]})


def cost(tasks: list[tuple], costs: dict) -> float:
    return sum(costs[t[0]]["visit_start"] if i == 0 or not shares_buffers(tasks[i - 1], t)
               else costs[t[0]].get("continuation", costs[t[0]]["visit_start"]) for i, t in enumerate(tasks))


def before(report: dict, costs: dict) -> dict:
    tasks = tasks_of(report)
    matrix = report["distances"]["matrix"]
    first, every, rotated = {}, [], []
    for i, t in enumerate(tasks):
        rep = first.setdefault((t[0], matrix[t[1]][t[2]], t[4]), i)
        if rep == i or tasks[rep][:3] == t[:3]:
            every.append(i)
        elif rotated and rotated[-1][-1] == i - 1 and shares_buffers(tasks[i - 1], t):
            rotated[-1].append(i)
        else:
            rotated.append([i])
    budget = DUTY * INTERVAL_S
    full = cost(tasks, costs)
    rounds = 1
    if rotated and full > ROTATE_ABOVE * budget:
        rot = sum(cost([tasks[i] for i in v], costs) for v in rotated)
        room = max(ROTATE_ABOVE * budget - cost([tasks[i] for i in every], costs), budget)
        rounds = int(min(max(math.ceil(rot / room), 1), len(rotated)))
    n = len(rotated)
    cycle = cycle_cpu = 0.0
    for r in range(rounds):
        which = sorted(every + [i for v in rotated[r * n // rounds:(r + 1) * n // rounds] for i in v])
        cpu = cost([tasks[i] for i in which], costs)
        cycle_cpu += cpu
        cycle += max(INTERVAL_S, cpu / DUTY)
    first_round = max(INTERVAL_S, full / DUTY)
    armed = first_round + (ROUNDS - 1) * cycle
    return {"ready_seconds": first_round, "armed_representatives_seconds": armed, "armed_every_pair_seconds": armed,
            "drift_after_restart": hours(first_round + 4 * cycle), "cycle_cpu_seconds": cycle_cpu,
            "rotation_rounds": rounds,
            "representatives_refresh_seconds": cycle / rounds, "every_pair_refresh_seconds": cycle,
            "cpu_seconds_per_hour": DUTY * 3600}


def hours(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds < 2 * 3600 else f"{seconds / 3600:.1f} h"


def main() -> int:
    binary, costs_path = Path(sys.argv[1]), Path(sys.argv[2])
    costs = json.loads(costs_path.read_text())
    rows = [("`/-/ready`, every representative measured, after a start", "ready_seconds", hours),
            ("the same after a restart", None, hours),
            ("representatives' drift alerts armed", "armed_representatives_seconds", hours),
            ("every pair's drift alerts armed", "armed_every_pair_seconds", hours),
            ("after a restart once armed: drift checked again", "drift_after_restart", str),
            ("then: rounds a cycle", "rotation_rounds", str),
            ("representatives refresh every", "representatives_refresh_seconds", hours),
            ("every pair refreshes every", "every_pair_refresh_seconds", hours),
            ("CPU-s of a cycle (every pair once) once armed", "cycle_cpu_seconds", lambda v: f"{v:.1f}"),
            ("probe CPU, most in an hour (CPU-s)", "cpu_seconds_per_hour", lambda v: f"{v:.1f}")]
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "numaprobe.yaml"
        config.write_text(f"state_directory: {tmp}/state\n")
        results = []
        for xml in map(Path, sys.argv[3:]):
            plan = topology_json(binary, xml)
            now = topology_json(binary, xml, "--config.file", str(config), "--task-costs", str(costs_path))["schedule"]
            then = before(plan, costs)
            then["ready_after_restart"] = then["ready_seconds"]
            now["ready_after_restart"] = now["ready_after_restart_seconds"]
            # Recent figures and baselines are restored: drift is checked at
            # once, and every series has a new figure within a cycle.
            now["drift_after_restart"] = (f"at once (every series measured again within "
                                          f"{hours(now['rearmed_after_restart_seconds'])})")
            results.append((xml.name, len(plan["nodes"]), then, now))
    header = " | ".join(f"{n} nodes: before | {n} nodes: now" for _, n, _, _ in results)
    print(f"| | {header} |")
    print("|---|" + "---|---|" * len(results))
    for label, key, fmt in rows:
        cells = []
        for _, _, then, now in results:
            k = key or "ready_after_restart"
            cells += [fmt(then[k]), fmt(now[k])]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
