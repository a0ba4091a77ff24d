#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Round-to-round noise of the figures a running numaprobe daemon publishes
(docs/detection.md, "Noise"): the input of the detection thresholds and of the
noise model in tests/grafana/series_gen.py.

  bench/round_noise.py record URL OUT.jsonl [--minutes 30]
      scrape URL (a daemon's /metrics) every 5 s; append a JSON line (with
      the 1-min load average) whenever a figure, counter or timestamp changed
  bench/round_noise.py analyze OUT.jsonl [--lag-s 300]
      per series: figures, round-to-round relative change (sd, p99, max of
      |change|), the change between figures about --lag-s apart, the spread of
      the figures around their median and the same for the median of the last
      3 figures (what the alerts compare with the baseline); runs by result

Not a test: the figures depend on the machine and on what else runs on it.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import urllib.request

KEEP = ("numaprobe_memory_latency_seconds", "numaprobe_memory_bandwidth_bytes_per_second",
        "numaprobe_probe_last_success_timestamp_seconds", "numaprobe_core_to_core_latency_seconds",
        "numaprobe_memory_latency_spread_seconds", "numaprobe_rounds_completed_total",
        "numaprobe_probe_runs_total", "numaprobe_duty_cycle_ratio", "numaprobe_samples_discarded_total",
        "numaprobe_probe_config_info")
FIGURES = ("numaprobe_memory_latency_seconds{", "numaprobe_memory_bandwidth_bytes_per_second{",
           "numaprobe_core_to_core_latency_seconds{")


def record(url: str, out: str, minutes: float) -> None:
    prev = None
    deadline = time.time() + minutes * 60
    with open(out, "a") as f:
        while time.time() < deadline:
            try:
                body = urllib.request.urlopen(url, timeout=5).read().decode()
            except OSError as e:
                f.write(json.dumps({"t": time.time(), "error": str(e)}) + "\n")
                f.flush()
                time.sleep(5)
                continue
            cur = {}
            for line in body.splitlines():
                if line.startswith(KEEP):
                    k, _, v = line.rpartition(" ")
                    cur[k] = float(v)
            if cur != prev:
                with open("/proc/loadavg") as la:
                    load1 = float(la.read().split()[0])
                f.write(json.dumps({"t": time.time(), "load1": load1, "m": cur}) + "\n")
                f.flush()
                prev = cur
            time.sleep(5)


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return math.nan
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def stats(xs: list[float]) -> str:
    if len(xs) < 2:
        return f"n={len(xs)}"
    a = [abs(x) for x in xs]
    return (f"n={len(xs):3d} sd={statistics.pstdev(xs) * 100:5.2f}% p50|.|={quantile(a, 0.5) * 100:5.2f}% "
            f"p99|.|={quantile(a, 0.99) * 100:5.2f}% max|.|={max(a) * 100:5.2f}%")


def analyze(path: str, lag_s: float) -> None:
    rows = [json.loads(line) for line in open(path)]
    rows = [r for r in rows if "m" in r]
    series: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        for k, v in r["m"].items():
            if k.startswith(FIGURES):
                s = series.setdefault(k, [])
                if not s or s[-1][1] != v:  # a new figure (a repeated float is the same figure)
                    s.append((r["t"], v))
    span = (rows[-1]["t"] - rows[0]["t"]) / 60 if rows else 0
    print(f"{path}: {len(rows)} changes recorded over {span:.1f} min")
    loads = [r["load1"] for r in rows if "load1" in r]
    if loads:
        print(f"1-min load average while recording: min {min(loads):.1f}, median {statistics.median(loads):.1f}, "
              f"max {max(loads):.1f} ({len(loads)} readings)")
    for k, s in sorted(series.items()):
        vals = [v for _, v in s]
        print(f"\n{k}")
        if len(vals) < 3:
            print(f"  only {len(vals)} figures")
            continue
        gaps = [b[0] - a[0] for a, b in zip(s, s[1:])]
        print(f"  figures {len(vals)}, median {statistics.median(vals):.4g}, "
              f"median time between figures {statistics.median(gaps):.0f} s")
        print(f"  round-to-round change      {stats([b / a - 1 for a, b in zip(vals, vals[1:])])}")
        lagged = []
        for i, (t, v) in enumerate(s):
            j = next((j for j in range(i + 1, len(s)) if s[j][0] - t >= lag_s), None)
            if j is not None:
                lagged.append(s[j][1] / v - 1)
        print(f"  change over >= {lag_s:.0f} s        {stats(lagged)}")
        med = statistics.median(vals)
        print(f"  figure vs median of all    {stats([v / med - 1 for v in vals])}")
        m3 = [sorted(vals[i - 2:i + 1])[1] for i in range(2, len(vals))]
        print(f"  median of 3 vs median      {stats([v / med - 1 for v in m3])}")
    last = rows[-1]["m"] if rows else {}
    first = rows[0]["m"] if rows else {}
    print("\nruns in the recording by probe and result:")
    for k in sorted(last):
        if k.startswith("numaprobe_probe_runs_total") and last[k] - first.get(k, 0) > 0:
            print(f"  {k} {last[k] - first.get(k, 0):.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("url")
    r.add_argument("out")
    r.add_argument("--minutes", type=float, default=30)
    a = sub.add_parser("analyze")
    a.add_argument("path")
    a.add_argument("--lag-s", type=float, default=300)
    args = ap.parse_args()
    if args.cmd == "record":
        record(args.url, args.out, args.minutes)
    else:
        analyze(args.path, args.lag_s)


if __name__ == "__main__":
    sys.exit(main())
