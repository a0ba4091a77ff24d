#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two numaprobe binaries' HTTP servers side by side, in one run on one machine:
threads and resident memory between probes, /metrics under `wrk -t2 -c50`,
scrape latency with 400 idle and 100 trickling connections held open, and
bytes per scrape with and without gzip. Runs alternate A, B, A, B, ... so a
machine loaded by others disturbs both alike.

Usage: bench/http_compare.py OLD_BINARY NEW_BINARY [--rounds 3] [--wrk-seconds 10]
Prints one Markdown row per binary and round, then the medians. Not a test.
"""
import argparse
import http.client
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "integration"))
from daemon import Daemon, write_config  # noqa: E402

IDLE, TRICKLING, SCRAPES = 400, 100, 100


def status_field(pid, field):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(rf"{field}:\s+(\d+)", f.read()).group(1))


def between_probes(pid, samples=40):
    """(threads, VmRSS MiB): the least over a few seconds, i.e. between probes."""
    threads, rss = [], []
    for _ in range(samples):
        threads.append(status_field(pid, "Threads"))
        rss.append(status_field(pid, "VmRSS") / 1024)
        time.sleep(0.05)
    return min(threads), min(rss)


def wrk(port, seconds):
    out = subprocess.run([shutil.which("wrk"), "-t2", "-c50", f"-d{seconds}s", "--latency",
                          f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True).stdout
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}

    def pct(p):
        m = re.search(rf"{p}%\s+([0-9.]+)(us|ms|s)", out)
        return float(m.group(1)) * scale[m.group(2)] if m else float("nan")
    rps = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return pct(50), pct(99), float(rps.group(1)) if rps else float("nan"), errors.group(1) if errors else "none"


def scrape_ms(port):
    start = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        response.read()
        conn.close()
        return (time.monotonic() - start) * 1e3 if response.status == 200 else float("inf")
    except OSError:
        return float("inf")


def under_slow_clients(port):
    """p50, p99 (ms) of SCRAPES fresh-connection scrapes with IDLE silent and
    TRICKLING trickling connections held (replaced when the server drops them)."""
    stop = threading.Event()
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(IDLE)]

    def trickle():
        socks = [None] * TRICKLING
        while not stop.is_set():
            for i, s in enumerate(socks):
                try:
                    if s is None:
                        s = socks[i] = socket.create_connection(("127.0.0.1", port), timeout=0.5)
                        s.sendall(b"GET /metr")
                    s.send(b"x")
                except OSError:
                    if s is not None:
                        s.close()
                    socks[i] = None
            stop.wait(0.5)
        for s in socks:
            if s is not None:
                s.close()
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    time.sleep(4)  # past the request timeout: trickling connections dropped and replaced once
    latencies = sorted(scrape_ms(port) for _ in range(SCRAPES))
    stop.set()
    thread.join()
    for s in idle:
        s.close()
    return latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]


def scrape_bytes(port, gzip):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"} if gzip else {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return len(body), response.getheader("Content-Encoding", "identity")


def measure(binary, wrk_seconds):
    tmp = tempfile.mkdtemp(prefix="numaprobe-http-compare-")
    # One probe round, then none for an hour: the figures are the server's.
    with Daemon(binary, write_config(tmp, duty_cycle=0.05, interval="1h")) as d:
        d.wait_ready()
        time.sleep(1)
        threads, rss = between_probes(d.proc.pid)
        p50, p99, rps, errors = wrk(d.port, wrk_seconds)
        slow_p50, slow_p99 = under_slow_clients(d.port)
        identity, _ = scrape_bytes(d.port, gzip=False)
        gzipped, encoding = scrape_bytes(d.port, gzip=True)
        threads_after, rss_after = between_probes(d.proc.pid)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"threads": threads, "rss": rss, "threads_after": threads_after, "rss_after": rss_after,
            "p50": p50, "p99": p99, "rps": rps, "errors": errors, "slow_p50": slow_p50, "slow_p99": slow_p99,
            "identity": identity, "gzipped": gzipped, "encoding": encoding}


def row(name, r):
    return (f"| {name} | {r['threads']} | {r['rss']:.1f} | {r['threads_after']} / {r['rss_after']:.1f} | "
            f"{r['p50']:.2f} | {r['p99']:.2f} | {r['rps']:.0f} | {r['errors']} | {r['slow_p50']:.1f} | "
            f"{r['slow_p99']:.1f} | {r['identity']} | {r['gzipped']} ({r['encoding']}) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--wrk-seconds", type=int, default=10)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))  # the unit's LimitNOFILE
    print("| binary | threads | VmRSS MiB | after the load: threads / VmRSS | wrk p50 ms | wrk p99 ms | req/s | "
          "socket errors | slow-client scrape p50 ms | p99 ms | bytes per scrape | with Accept-Encoding: gzip |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    results = {"old": [], "new": []}
    for _ in range(args.rounds):
        for name in ("old", "new"):
            r = measure(getattr(args, name), args.wrk_seconds)
            results[name].append(r)
            print(row(name, r), flush=True)
    for name, runs in results.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "slow_p99", "rss")}
        print(f"median {name}: {med['rps']:.0f} req/s, p50 {med['p50']:.2f} ms, p99 {med['p99']:.2f} ms, "
              f"slow-client scrape p99 {med['slow_p99']:.1f} ms, VmRSS {med['rss']:.1f} MiB")


if __name__ == "__main__":
    main()
