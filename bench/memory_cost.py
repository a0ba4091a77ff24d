#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon's resident memory between and during probes, and the CPU each
probe run costs with its buffer preparation.

Runs `serve` for --seconds at --duty-cycle (5% by default, so that a few rounds
fit in a minute; memory does not depend on the duty cycle), samples VmRSS every
50 ms, then reads numaprobe_probe_runs_total and numaprobe_probe_cpu_seconds_total.

Usage: bench/memory_cost.py BINARY [--seconds 60] [--duty-cycle 0.05]
Not a test: prints the figures for docs/performance.md.
"""
import argparse
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--duty-cycle", default="0.05")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="numaprobe-memory-")
    cfg = os.path.join(tmp, "c.yaml")
    with open(cfg, "w") as f:
        f.write(f"state_directory: {tmp}/state\nprobe_lock_file: {tmp}/lock\n"
                f"schedule:\n  duty_cycle: {args.duty_cycle}\n  interval: 20s\n")
    log = open(os.path.join(tmp, "log"), "w+")
    p = subprocess.Popen([args.binary, "serve", "--config.file", cfg, "--web.listen-address", "127.0.0.1:0"],
                         stdout=log, stderr=subprocess.STDOUT)
    port = None
    while port is None:
        log.seek(0)
        m = re.search(r"Listening on port (\d+)", log.read())
        port = int(m.group(1)) if m else time.sleep(0.05)
    samples = []
    t0 = time.time()
    while time.time() - t0 < args.seconds:
        with open(f"/proc/{p.pid}/status") as f:
            samples.append(int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024)
        time.sleep(0.05)
    with open(f"/proc/{p.pid}/status") as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    runs = {}
    for probe, _, v in re.findall(r'numaprobe_probe_runs_total\{probe="([^"]+)",result="([^"]+)"\} (\S+)', text):
        runs[probe] = runs.get(probe, 0) + float(v)
    cpu = {k: float(v) for k, v in re.findall(r'numaprobe_probe_cpu_seconds_total\{probe="([^"]+)"\} (\S+)', text)}
    s = sorted(samples)
    print(f"| {args.binary} | RSS median {s[len(s) // 2]:.1f} MiB | peak (VmHWM) {hwm:.1f} MiB |")
    for probe, n in sorted(runs.items()):
        if n:
            print(f"|   {probe} | {int(n)} runs, {cpu.get(probe, 0):.3f} CPU s | {cpu.get(probe, 0) / n * 1000:.1f} ms per run |")


if __name__ == "__main__":
    main()
