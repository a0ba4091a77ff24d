#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The real process's CPU against the duty-cycle budget it publishes.

Runs `numaprobe serve` on a free loopback port (default: config/numaprobe.yaml
as shipped, with a fresh temporary state directory;
--duty-cycle and --interval set the schedule), and every --step seconds reads
the process's utime + stime (/proc/PID/stat), the probes' own CPU and the
budget it publishes (numaprobe_probe_cpu_seconds_total and
numaprobe_duty_cycle_budget_ratio, scraped), machine-wide CPU pressure
(/proc/pressure/cpu "some") and the time the daemon's threads waited for a
CPU (/proc/PID/task/*/schedstat). Prints, for the first --first-minutes and
for the whole window from the daemon's start, the process CPU as % of one
CPU against the budget (averaged over the window as scraped), and how busy
the machine was meanwhile.

What to expect: the budget is a ceiling, "at most duty_cycle x window plus
one visit" (daemon/serve/budget.h). The process spends it only where the
budget, not the interval, paces the rounds: at the shipped 0.2% and 5 min
interval a round of a small host costs far less than its interval allows, and
the process spends less. The first minutes hold the first round's buffer
preparation, the visit that can overshoot. A machine that was busy (pressure)
can hold SCHED_IDLE probes below their budget. The pacing itself, with costs
given, is asserted in tests/daemon/scheduler_loop_test.cc
(PausesEachVisitByItsCostAndSpendsTheBudgetInEveryWindow).

Usage: bench/budget_cpu.py BINARY [--config FILE | --duty-cycle R --interval D]
                           [--minutes 10] [--first-minutes 2] [--step 5]
Prints a Markdown table for docs/performance.md. Not a test: the figures
depend on the machine and on what else runs on it.
"""
import argparse
import os
import signal
import sys
import tempfile
import time
import urllib.request

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
from daemon import cpu_pressure_seconds, parse_metrics, run_queue_wait_seconds  # noqa: E402
from daemon_cost import cpu_seconds, default_config, start_daemon  # noqa: E402


def scrape(port):
    """(probes' CPU seconds, published budget, rounds completed, runs timed out)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        m = parse_metrics(r.read().decode())
    probe_cpu = sum(v for _, v in m.get("numaprobe_probe_cpu_seconds_total", []))
    timeouts = sum(v for labels, v in m.get("numaprobe_probe_runs_total", []) if labels.get("result") == "timeout")
    return (probe_cpu, m["numaprobe_duty_cycle_budget_ratio"][0][1],
            m.get("numaprobe_rounds_completed_total", [({}, 0.0)])[0][1], timeouts)


def sample(proc, port):
    probe_cpu, budget, rounds, timeouts = scrape(port)
    return {"t": time.monotonic(), "cpu": cpu_seconds(proc.pid), "probe_cpu": probe_cpu, "budget": budget,
            "rounds": rounds, "timeouts": timeouts, "pressure": cpu_pressure_seconds(),
            "waited": run_queue_wait_seconds(proc.pid)}


def summary(samples):
    """One table row's figures over `samples` (the first to the last)."""
    first, last = samples[0], samples[-1]
    seconds = last["t"] - first["t"]
    # The budget as published, each value for as long as it was seen.
    budget = sum(a["budget"] * (b["t"] - a["t"]) for a, b in zip(samples, samples[1:])) / seconds

    def share(key):
        if first[key] is None or last[key] is None:
            return "unknown"
        # The threads' wait leaves with a thread that exits: only rises count.
        rises = sum(max(0.0, b[key] - a[key]) for a, b in zip(samples, samples[1:]))
        return f"{rises / seconds:.1%}"
    return {"seconds": seconds, "process": (last["cpu"] - first["cpu"]) / seconds,
            "probes": (last["probe_cpu"] - first["probe_cpu"]) / seconds, "budget": budget,
            "pressure": share("pressure"), "waited": share("waited"),
            "rounds": last["rounds"] - first["rounds"], "timeouts": last["timeouts"] - first["timeouts"]}


def row(name, s):
    return (f"| {name} ({s['seconds'] / 60:.1f} min) | {s['process']:.3%} | {s['probes']:.3%} | {s['budget']:.3%} "
            f"| {s['process'] / s['budget']:.2f} | {s['pressure']} | {s['waited']} | {s['rounds']:.0f} "
            f"| {s['timeouts']:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--config", help="a configuration file, used as it is (else config/numaprobe.yaml as shipped)")
    ap.add_argument("--duty-cycle", type=float, help="schedule.duty_cycle for the shipped configuration")
    ap.add_argument("--interval", help="schedule.interval for the shipped configuration (e.g. 30s, 5m)")
    ap.add_argument("--minutes", type=float, default=10, help="the window, from the daemon's start")
    ap.add_argument("--first-minutes", type=float, default=2, help="the first part of the window, shown apart")
    ap.add_argument("--step", type=float, default=5, help="seconds between samples")
    args = ap.parse_args()
    if args.config and (args.duty_cycle is not None or args.interval):
        ap.error("--duty-cycle and --interval change the shipped configuration; with --config set them in the file")
    if not 0 < args.first_minutes < args.minutes:
        ap.error("--first-minutes must be above 0 and below --minutes")
    tmp = tempfile.mkdtemp(prefix="numaprobe-bench-")
    if args.config:
        config = args.config
    else:
        schedule = {k: v for k, v in (("duty_cycle", args.duty_cycle), ("interval", args.interval)) if v is not None}
        config, _, _ = default_config(args.binary, tmp, schedule)
    proc, port, log = start_daemon(args.binary, config)
    samples = []
    try:
        end = time.monotonic() + args.minutes * 60
        while True:
            samples.append(sample(proc, port))
            if samples[-1]["t"] >= end:
                break
            time.sleep(max(0.0, min(args.step, end - time.monotonic())))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    first = [s for s in samples if s["t"] - samples[0]["t"] <= args.first_minutes * 60 + args.step / 2]
    print(f"numaprobe serve --config.file {config} (log {log}), sampled every {args.step:g} s from its start")
    print()
    print("| window | process CPU, of one CPU | probes' CPU | budget | process / budget "
          "| CPU pressure (some) | daemon threads waited for a CPU | rounds | runs timed out |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(row("first", summary(first)))
    print(row("whole", summary(samples)))


if __name__ == "__main__":
    main()
