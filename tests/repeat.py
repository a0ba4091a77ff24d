#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs ctest entries several times in a row, on an idle machine or beside busy
loops, and prints how often each passed and how long each run took: the way a
test that may depend on the machine's speed is shown not to (docs/testing.md,
"Tests that hold whatever the machine's speed").

    python3 tests/repeat.py --runs 10 vm_numa vm_host_facts
    python3 tests/repeat.py --runs 5 --busy 0,1 vm_numa vm_host_facts
    python3 tests/repeat.py --build-dir build/release-aarch64 --runs 1 vm_numa

--busy CPUS starts one endless shell loop pinned to each listed CPU
(`taskset -c N sh -c 'while :; do :; done'`) before the first run and ends
them after the last, so every run shares the machine with them. Each run's
ctest output goes to --log-dir (default: a new directory under /tmp, printed),
so a failure can be read afterwards. Exit status 0 only if every run passed;
a run ctest reports as skipped counts as not passed.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[1]


def start_busy_loops(cpus: list[int]) -> list[subprocess.Popen]:
    return [subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"]) for cpu in cpus]


def stop_busy_loops(loops: list[subprocess.Popen]) -> None:
    for loop in loops:
        loop.kill()
        loop.wait()


def run_once(build_dir: Path, entry: str, log: Path) -> tuple[str, float]:
    """(passed | failed | skipped | not run, wall seconds) of one ctest run of `entry`."""
    t0 = time.monotonic()
    with open(log, "w") as out:
        p = subprocess.run(["ctest", "--test-dir", str(build_dir), "-R", f"^{re.escape(entry)}$",
                            "--output-on-failure"], stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - t0
    text = log.read_text(errors="replace")
    if "No tests were found" in text:
        return "not run", seconds
    if re.search(r"\*\*\*Skipped|Not Run|Disabled", text):
        return "skipped", seconds
    return ("passed" if p.returncode == 0 and re.search(r"\bPassed\b", text) else "failed"), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("entries", nargs="+", help="ctest entry names (exact), run in this order each round")
    parser.add_argument("--runs", type=int, default=1, help="how many times each entry runs")
    parser.add_argument("--busy", default="", help="comma-separated CPUs to keep busy with a loop each (e.g. 0,1)")
    parser.add_argument("--build-dir", type=Path, default=SOURCE_DIR / "build" / "release")
    parser.add_argument("--log-dir", type=Path, default=None)
    args = parser.parse_args()
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="numaprobe-repeat-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    busy = [int(c) for c in args.busy.split(",") if c.strip()]
    print(f"repeat: {args.runs} run(s) of {', '.join(args.entries)} in {args.build_dir}, "
          f"{'beside busy loops on CPUs ' + args.busy if busy else 'no busy loops'}; "
          f"load average {os.getloadavg()[0]:.1f}; logs in {log_dir}", flush=True)
    results: dict[str, list[tuple[str, float]]] = {e: [] for e in args.entries}
    loops = start_busy_loops(busy)
    try:
        for i in range(1, args.runs + 1):
            for entry in args.entries:
                log = log_dir / f"{entry}.{i}.log"
                outcome, seconds = run_once(args.build_dir, entry, log)
                results[entry].append((outcome, seconds))
                print(f"repeat: run {i}/{args.runs} {entry}: {outcome} in {seconds:.0f} s "
                      f"(load average {os.getloadavg()[0]:.1f}){'' if outcome == 'passed' else '; log ' + str(log)}",
                      flush=True)
    finally:
        stop_busy_loops(loops)
    every_passed = True
    for entry, runs in results.items():
        passed = sum(1 for outcome, _ in runs if outcome == "passed")
        every_passed = every_passed and passed == len(runs)
        times = [seconds for _, seconds in runs]
        print(f"repeat: {entry}: {passed}/{len(runs)} passed{' beside busy loops on CPUs ' + args.busy if busy else ''};"
              f" wall s {', '.join(f'{t:.0f}' for t in times)} (median {statistics.median(times):.0f})")
    return 0 if every_passed else 1


if __name__ == "__main__":
    sys.exit(main())
