#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""numaprobe's idle latency beside google/multichase's, like for like
(docs/measurement.md, "Which statistic").

numaprobe publishes the median of its accepted samples and gives their minimum
beside it; multichase prints the best (lowest) of its samples of 0.5 s, or with
-a their average. So the comparisons that mean something are:

  numaprobe median  / multichase -a   (average against average-like median)
  numaprobe minimum / multichase      (best sample against best sample)

Runs N alternated triplets on one CPU (the order flips every triplet, so drift
in the host's load falls on every tool alike):

  numaprobe probe --tests latency --format json --cpus CPU --nodes NODE
      --latency-buffer SIZE [--stride S]
  multichase -m SIZE -n 5 [-s S]         (pinned to CPU)
  multichase -a -m SIZE -n 5 [-s S]      (pinned to CPU)

and prints, per triplet and over all, the two ratios with their spread
(min-max and the median's), and each tool's CPU time (user + system of the
process, from the kernel's accounting of the child; numaprobe's JSON
cpu_seconds, the measuring thread alone, beside it).

  bench/latency_vs_multichase.py --multichase PATH --numaprobe build/release/numaprobe \
      --cpu 1 --size-mib 256 --pairs 15

multichase prints its figure as the last number of its output, in ns
(`parse_multichase`); --parse FILE parses a saved output and prints the figure,
to check the parsing without running anything. Standard library only.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def parse_multichase(text):
    """multichase's figure in ns: the last number it printed (its result line
    is the figure alone, e.g. "  89.752"; with -v or -X, the figure still ends
    the output)."""
    numbers = NUMBER.findall(text)
    if not numbers:
        raise ValueError("no number in multichase's output: %r" % text[-200:])
    value = float(numbers[-1])
    if not value > 0:
        raise ValueError("multichase printed %s, not a latency in ns" % numbers[-1])
    return value


def parse_numaprobe(text):
    """(median ns, min ns, measuring-thread CPU s) of the one latency record."""
    report = json.loads(text)
    records = report.get("latency") or []
    if len(records) != 1:
        raise ValueError("expected one latency record, got %d" % len(records))
    r = records[0]
    if r["outcome"] != "ok":
        raise ValueError("numaprobe: %s: %s" % (r["outcome"], r["reason"]))
    return r["median_seconds"] * 1e9, r["min_seconds"] * 1e9, r["cpu_seconds"]


def run_counted(argv, cpu):
    """Runs argv pinned to `cpu`; returns (stdout, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True, check=False,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(argv), r.returncode, (r.stderr or r.stdout)[-400:]))
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r.stdout, cpu_s


def spread(values):
    """"median [min-max]" of a list."""
    return "%.3f [%.3f-%.3f]" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--multichase", help="path to google/multichase's multichase binary")
    ap.add_argument("--numaprobe", help="path to the numaprobe binary")
    ap.add_argument("--cpu", type=int, default=1, help="the one CPU every run uses (default 1)")
    ap.add_argument("--node", type=int, default=0, help="memory node of numaprobe's buffer (default 0; "
                    "multichase allocates on the CPU's node by first touch)")
    ap.add_argument("--size-mib", type=int, default=256, help="buffer size in MiB for both (default 256)")
    ap.add_argument("--stride", type=int, help="element stride for both (default: each tool's own)")
    ap.add_argument("--pairs", type=int, default=15, help="alternated triplets (default 15)")
    ap.add_argument("--parse", metavar="FILE", help="only parse a saved multichase output and print its figure")
    args = ap.parse_args()

    if args.parse:
        with open(args.parse) as f:
            print("%.3f ns" % parse_multichase(f.read()))
        return 0
    if not args.multichase or not args.numaprobe:
        ap.error("--multichase and --numaprobe are required (or --parse FILE)")
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")

    stride_np = ["--stride", str(args.stride)] if args.stride else []
    stride_mc = ["-s", str(args.stride)] if args.stride else []
    commands = {
        "numaprobe": [args.numaprobe, "probe", "--tests", "latency", "--format", "json", "--cpus", str(args.cpu),
                      "--nodes", str(args.node), "--latency-buffer", "%dMiB" % args.size_mib] + stride_np,
        "best": [args.multichase, "-m", "%dm" % args.size_mib, "-n", "5"] + stride_mc,
        "average": [args.multichase, "-a", "-m", "%dm" % args.size_mib, "-n", "5"] + stride_mc,
    }
    for name, argv in commands.items():
        print("# %-9s %s" % (name, " ".join(argv)))

    rows = []
    print("%4s %10s %10s %10s %10s %9s %9s %8s %8s %8s %8s" % (
        "pair", "np_median", "np_min", "mc_avg", "mc_best", "med/avg", "min/best",
        "np_cpu", "np_kern", "avg_cpu", "best_cpu"))
    for pair in range(args.pairs):
        order = ["numaprobe", "best", "average"]
        if pair % 2:
            order.reverse()
        got = {}
        for name in order:
            out, cpu_s = run_counted(commands[name], args.cpu)
            if name == "numaprobe":
                median, minimum, kernel_cpu = parse_numaprobe(out)
                got[name] = (median, minimum, cpu_s, kernel_cpu)
            else:
                got[name] = (parse_multichase(out), cpu_s)
        median, minimum, np_cpu, np_kernel = got["numaprobe"]
        avg, avg_cpu = got["average"]
        best, best_cpu = got["best"]
        row = {"med_avg": median / avg, "min_best": minimum / best, "np_cpu": np_cpu, "np_kernel": np_kernel,
               "avg_cpu": avg_cpu, "best_cpu": best_cpu}
        rows.append(row)
        print("%4d %10.2f %10.2f %10.2f %10.2f %9.3f %9.3f %8.3f %8.3f %8.3f %8.3f" % (
            pair + 1, median, minimum, avg, best, row["med_avg"], row["min_best"], np_cpu, np_kernel, avg_cpu,
            best_cpu))
        sys.stdout.flush()

    print()
    print("over %d alternated triplets, median [min-max]:" % len(rows))
    print("  numaprobe median / multichase -a   : %s" % spread([r["med_avg"] for r in rows]))
    print("  numaprobe minimum / multichase best: %s" % spread([r["min_best"] for r in rows]))
    print("  CPU s per figure: numaprobe %s (measuring thread %s), multichase -a %s, multichase %s" % (
        spread([r["np_cpu"] for r in rows]), spread([r["np_kernel"] for r in rows]),
        spread([r["avg_cpu"] for r in rows]), spread([r["best_cpu"] for r in rows])))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, RuntimeError) as e:
        sys.exit("latency_vs_multichase: %s" % e)
