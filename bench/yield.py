#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Figure yield on a busy host: how many probe runs produce a figure.

Scenarios (stress-ng from Debian, started before and stopped after each one):
  idle    - nothing else running;
  pinned  - one busy loop on the node's representative CPU (the highest), the
            other CPUs idle: the case where a fixed probe CPU gets nothing;
  load50  - stress-ng --cpu N/2 (about 50% of the machine, unpinned);
  load90  - stress-ng --cpu N --cpu-load 90 (about 90%).
For each: the daemon (`serve`, --interval/--duty-cycle below, for --seconds)
and its numaprobe_probe_runs_total by probe and result; then --cli-runs runs
of `numaprobe probe --tests latency` and how many exit 0.

Usage: bench/yield.py BINARY [--seconds 60] [--cli-runs 30] [--scenarios idle,pinned,load50,load90]
Prints a Markdown table for docs/performance.md. Not a test.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stressor(scenario):
    n = os.cpu_count()
    if scenario == "idle":
        return None
    if scenario == "pinned":
        return ["taskset", "-c", str(n - 1), "stress-ng", "--cpu", "1", "--cpu-method", "int64"]
    if scenario == "load50":
        return ["stress-ng", "--cpu", str(max(1, n // 2)), "--cpu-method", "int64"]
    if scenario == "load90":
        return ["stress-ng", "--cpu", str(n), "--cpu-load", "90", "--cpu-method", "int64"]
    sys.exit(f"unknown scenario {scenario}")


def daemon_yield(binary, tmp, seconds, interval, duty):
    config = os.path.join(tmp, "yield.yaml")
    with open(config, "w") as f:
        f.write(f"state_directory: {tmp}/state\nprobe_lock_file: {tmp}/probe.lock\n"
                f"schedule:\n  interval: {interval}\n  duty_cycle: {duty}\n")
    log = open(os.path.join(tmp, "daemon.log"), "w+")
    proc = subprocess.Popen([binary, "serve", "--config.file", config, "--web.listen-address", "127.0.0.1:0"],
                            stdout=log, stderr=subprocess.STDOUT)
    port = None
    for _ in range(200):
        log.seek(0)
        m = re.search(r"Listening on port (\d+)", log.read())
        if m:
            port = int(m.group(1))
            break
        time.sleep(0.05)
    try:
        time.sleep(seconds)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    runs = {}
    for probe, result, value in re.findall(
            r'numaprobe_probe_runs_total\{probe="([^"]+)",result="([^"]+)"\} (\S+)', text):
        runs.setdefault(probe, {})[result] = runs.get(probe, {}).get(result, 0) + float(value)
    return runs


def cli_yield(binary, tmp, runs):
    ok = 0
    reasons = []
    for _ in range(runs):
        r = subprocess.run([binary, "probe", "--tests", "latency", "--lock-file", f"{tmp}/cli.lock"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            ok += 1
        else:
            reasons.append(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-200:])
    return ok, reasons


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--cli-runs", type=int, default=30)
    ap.add_argument("--interval", default="10s")
    ap.add_argument("--duty-cycle", default="0.05")
    ap.add_argument("--scenarios", default="idle,pinned,load50,load90")
    args = ap.parse_args()
    print(f"| scenario | daemon: ok runs / runs (latency, bandwidth, core_to_core) | CLI latency: exit 0 / runs |")
    print("|---|---|---|")
    for scenario in args.scenarios.split(","):
        tmp = tempfile.mkdtemp(prefix="numaprobe-yield-")
        cmd = stressor(scenario)
        stress = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if cmd else None
        try:
            time.sleep(1)
            runs = daemon_yield(args.binary, tmp, args.seconds, args.interval, args.duty_cycle)
            ok, reasons = cli_yield(args.binary, tmp, args.cli_runs)
        finally:
            if stress:
                stress.send_signal(signal.SIGINT)
                stress.wait(timeout=30)
        cells = []
        for probe in ("latency", "bandwidth", "core_to_core"):
            r = runs.get(probe, {})
            total = sum(r.values())
            cells.append(f"{probe} {int(r.get('ok', 0))}/{int(total)}")
        print(f"| {scenario} | {', '.join(cells)} | {ok}/{args.cli_runs} |", flush=True)
        for reason in reasons[:3]:
            print(f"  {scenario} CLI failure: {reason}", file=sys.stderr)


if __name__ == "__main__":
    main()
