#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare numaprobe's short bandwidth and latency estimates with references.

Bandwidth: for one CPU and one buffer size, runs likwid-bench (load_avx,
store_mem_avx, copy_avx) and numaprobe's read / NT write / copy the same number
of times, interleaved (so drift in host load hits both alike), and prints the
medians, the numaprobe/likwid ratios and the CPU cost of each numaprobe
estimate.

Latency: runs the daemon's default short estimate (LatencyRunSpec) five times
and a long run of the same chase over the same buffer (2 s of loads), and
prints short/long, the spread of the five estimates and their CPU cost.

Core-to-core: runs the c2c probe five times and prints the spread of medians.

numaprobe is driven through build/<dir>/bench/bench_driver (see its header
for why not the CLI). Standard library only.

  bench/compare_likwid.py --driver build/h2/bench/bench_driver [--runs 5]
"""
import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys

# likwid-bench kernel -> numaprobe op. *_mem_* are likwid's non-temporal
# kernels; copy_avx uses regular stores like numaprobe's copy. Both tools count
# loaded + stored bytes, without write-allocate traffic.
PAIRS = [("load_avx", "read"), ("store_mem_avx", "write"), ("copy_avx", "copy")]


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout


def likwid(test, size_mb, cpu_expected):
    # "-w N:<size>:1": one thread in domain N, placed compactly, i.e. on the
    # domain's first hwthread; we check it is the CPU numaprobe uses.
    out = run(["likwid-bench", "-t", test, "-w", f"N:{size_mb}MB:1"])
    cpu = int(re.search(r"running on hwthread (\d+)", out).group(1))
    if cpu != cpu_expected:
        sys.exit(f"likwid-bench ran on hwthread {cpu}, numaprobe on {cpu_expected}")
    return float(re.search(r"MByte/s:\s+([\d.]+)", out).group(1)) * 1e6


def numaprobe(driver, kind, *flags, tries=3):
    """Runs the driver; a run whose outcome is not ok (e.g. "disturbed" when
    the host got busy) is reported on stderr and repeated."""
    for _ in range(tries):
        lines = run([driver, kind, *map(str, flags)]).splitlines()
        results = [json.loads(line) for line in lines if line.startswith("{")]
        bad = [r for r in results if r["outcome"] != "ok"]
        if not bad:
            return results
        print(f"(numaprobe {kind}: {bad[0]['outcome']}: {bad[0]['reason']}; retrying)", file=sys.stderr)
    sys.exit(f"numaprobe {kind}: no clean run in {tries} tries")


def spread(values):
    """(max - min) / median, in percent."""
    return 100 * (max(values) - min(values)) / statistics.median(values)


def bandwidth(args):
    print(f"## Bandwidth vs likwid-bench (cpu {args.cpu}, {args.size_mb} MB, {args.runs} runs each)\n")
    rows, runs = [], []
    for test, op in PAIRS:
        ref, ours, cpu_ms, discards = [], [], [], 0
        for _ in range(args.runs):
            ref.append(likwid(test, args.size_mb, args.cpu))
            # The default 32 MiB bursts, unless the buffer is too small for 4
            # rotations (copy moves two sides per burst).
            burst_kib = min(32 << 10, args.size_mb * 1024 // (8 if op == "copy" else 4))
            r = numaprobe(args.driver, "bandwidth", "--op", op, "--cpu", args.cpu,
                          "--buffer-mib", args.size_mb, "--burst-kib", burst_kib)[0]
            ours.append(r["bytes_per_second"]["median"])
            cpu_ms.append(r["cpu_ms"])
            discards += r["discards"]
        rows.append((test, op, statistics.median(ref), statistics.median(ours), spread(ours),
                     statistics.median(cpu_ms), max(cpu_ms)))
        runs.append(f"{test}: {' '.join(f'{x / 1e9:.1f}' for x in ref)} | "
                    f"{op}: {' '.join(f'{x / 1e9:.1f}' for x in ours)} ({discards} bursts discarded)")
    print("| likwid-bench | GB/s | numaprobe | GB/s | ratio | numaprobe spread | CPU ms/estimate (median, max) |")
    print("|---|---|---|---|---|---|---|")
    for test, op, ref, ours, sp, cpu_med, cpu_max in rows:
        print(f"| {test} | {ref / 1e9:.2f} | {op} | {ours / 1e9:.2f} | {ours / ref:.3f} | {sp:.1f}% "
              f"| {cpu_med:.1f}, {cpu_max:.1f} |")
    print("\nPer run, in run order (GB/s):\n")
    for line in runs:
        print(f"    {line}")
    print()


def latency(args):
    print(f"## Latency: short estimate vs long run (cpu {args.cpu})\n")
    results = numaprobe(args.driver, "latency", "--cpu", args.cpu, "--short", 5, "--long-seconds", 2)
    short = [r for r in results if r["run"] == "short"]
    long_run = [r for r in results if r["run"] == "long"][0]
    medians = [r["ns_per_load"]["median"] for r in short]
    ref = long_run["ns_per_load"]["median"]
    b = short[0]
    print(f"buffer {b['buffer_bytes'] >> 20} MiB ({b['page']}), stride {b['stride']}, "
          f"{b['loads_per_sample']} loads/sample\n")
    print("| run | ns/load (median) | MAD ns | short/long | CPU ms | discarded samples |")
    print("|---|---|---|---|---|---|")
    for i, r in enumerate(short):
        m = r["ns_per_load"]
        print(f"| short {i + 1} | {m['median']:.2f} | {m['mad']:.2f} | {m['median'] / ref:.4f} | {r['cpu_ms']:.1f} "
              f"| {r['discards']} |")
    m = long_run["ns_per_load"]
    print(f"| long ({long_run['loads_per_sample']} loads x {m['n']}) | {m['median']:.2f} | {m['mad']:.2f} "
          f"| 1 | {long_run['cpu_ms']:.0f} | {long_run['discards']} |")
    print(f"\nshort/long (median of 5): {statistics.median(medians) / ref:.4f}; "
          f"spread of the 5 estimates: {spread(medians):.2f}%\n")


def c2c(args):
    print(f"## Core-to-core stability (cpus {args.cpu}, {args.cpu_b})\n")
    results = numaprobe(args.driver, "c2c", "--cpu-a", args.cpu, "--cpu-b", args.cpu_b, "--repeat", 5)
    medians = [r["one_way_ns"]["median"] for r in results]
    print("| run | one-way ns (median) | MAD ns | CPU ms | discarded samples |")
    print("|---|---|---|---|---|")
    for i, r in enumerate(results):
        print(f"| {i + 1} | {r['one_way_ns']['median']:.1f} | {r['one_way_ns']['mad']:.1f} | {r['cpu_ms']:.1f} "
              f"| {r['discards']} |")
    print(f"\nspread of the 5 medians: {spread(medians):.1f}%\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", required=True, help="path to bench_driver")
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--cpu-b", type=int, default=1, help="partner CPU for the c2c probe")
    parser.add_argument("--size-mb", type=int, default=256, help="buffer size (likwid MB, numaprobe MiB)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=["bandwidth", "latency", "c2c"])
    args = parser.parse_args()
    if args.only in (None, "bandwidth") and not shutil.which("likwid-bench"):
        sys.exit("likwid-bench not found (apt install likwid)")
    for name, fn in (("bandwidth", bandwidth), ("latency", latency), ("c2c", c2c)):
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
