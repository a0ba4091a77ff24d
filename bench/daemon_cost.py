#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the daemon costs the host, measured on the real binary:

  1. process CPU over a long run at the default budget (config/numaprobe.yaml,
     0.2% of one CPU) vs the budget + 0.05% allowance for everything else
     (bench/budget_cpu.py follows it over time, against the budget published);
  2. /metrics latency under 50 concurrent clients (wrk) while probes run;
  3. peak resident memory vs 32 MiB + the configured buffer budget.

Usage: bench/daemon_cost.py BINARY [--minutes 10] [--wrk-seconds 30]
Prints a Markdown table for docs/performance.md. Not a test: the figures depend
on the machine; the targets are checked and reported, not asserted.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid, field="VmHWM"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def start_daemon(binary, config):
    log = tempfile.NamedTemporaryFile("w+", prefix="numaprobe-bench-", delete=False)
    proc = subprocess.Popen([binary, "serve", "--config.file", config, "--web.listen-address", "127.0.0.1:0"],
                            stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        with open(log.name) as f:
            m = re.search(r"Listening on port (\d+)", f.read())
        if m:
            return proc, int(m.group(1)), log.name
        time.sleep(0.05)
    proc.kill()
    sys.exit("daemon did not start; log: " + log.name)


def printed(text, section, key):
    """The value of `section.key` in `numaprobe check-config --print`'s output."""
    m = re.search(rf"(?m)^{section}:\n(?:  .*\n)*?  {key}: (\S+)", text)
    if not m:
        sys.exit(f"check-config --print shows no {section}.{key}")
    return m.group(1)


def default_config(binary, tmp, schedule=None):
    """config/numaprobe.yaml as shipped (it only comments the defaults), with
    only the state directory moved into `tmp`, and the keys of
    `schedule` ({"duty_cycle": 0.05}) set. Returns its path and the duty cycle
    and memory budget it gives, as `numaprobe check-config --print` reads them."""
    with open(os.path.join(SRC, "config", "numaprobe.yaml")) as f:
        text = f.read()
    text += f"\nstate_directory: {tmp}/state\n"
    if schedule:
        text += "schedule: {" + ", ".join(f"{k}: {v}" for k, v in schedule.items()) + "}\n"
    path = os.path.join(tmp, "numaprobe.yaml")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([binary, "check-config", "--print", path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"numaprobe check-config --print {path}: {r.stderr.strip()}")
    return path, float(printed(r.stdout, "schedule", "duty_cycle")), printed(r.stdout, "memory", "budget")


def run_wrk(port, seconds):
    wrk = shutil.which("wrk")
    if not wrk:
        return None
    out = subprocess.run([wrk, "-t2", "-c50", f"-d{seconds}s", "--latency", f"http://127.0.0.1:{port}/metrics"],
                         capture_output=True, text=True).stdout
    p99 = re.search(r"99%\s+([0-9.]+)(us|ms|s)", out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    errors = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    reqs = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    return {"p99_ms": float(p99.group(1)) * scale[p99.group(2)] if p99 else None,
            "socket_errors": errors.group(1) if errors else "none",
            "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "rps": float(reqs.group(1)) if reqs else None, "raw": out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--wrk-seconds", type=int, default=30)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="numaprobe-bench-")
    config, budget, membudget = default_config(args.binary, tmp)
    proc, port, log = start_daemon(args.binary, config)
    try:
        # 1. Load test first, while the first round's probes run.
        wrk = run_wrk(port, args.wrk_seconds)
        # 2. Long run at the default budget: CPU of the whole process.
        c0, t0 = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.minutes * 60)
        used, elapsed = cpu_seconds(proc.pid) - c0, time.monotonic() - t0
        peak = rss_bytes(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    ratio = used / elapsed
    print(f"| process CPU over {args.minutes:g} min at duty_cycle {budget} | {ratio * 100:.4f}% of one CPU "
          f"| <= {(budget + 0.0005) * 100:.2f}% | {'met' if ratio <= budget + 0.0005 else 'MISSED'} |")
    print(f"| peak RSS (VmHWM), memory.budget {membudget} | {peak / 2**20:.1f} MiB | <= 32 MiB + budget | see note |")
    if wrk:
        ok = wrk["p99_ms"] is not None and wrk["p99_ms"] < 5 and wrk["non_2xx"] == 0 and wrk["socket_errors"] == "none"
        print(f"| /metrics p99, wrk -t2 -c50 -d{args.wrk_seconds}s | {wrk['p99_ms']} ms, {wrk['rps']} req/s, "
              f"non-2xx {wrk['non_2xx']}, socket errors {wrk['socket_errors']} | < 5 ms, 0 errors | "
              f"{'met' if ok else 'MISSED'} |")
        print(wrk["raw"], file=sys.stderr)
    else:
        print("| /metrics p99 | wrk not installed | | |")


if __name__ == "__main__":
    main()
