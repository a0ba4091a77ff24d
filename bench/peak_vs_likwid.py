#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""numaprobe's peak bandwidth against likwid-bench with the same threads on the
same CPUs, side by side.

Node 0 against its own memory. For each round: likwid-bench `load_avx` and
`store_mem_avx` (non-temporal stores) with `-w M0:<size>:<threads>` (the
threads placed compactly on NUMA domain 0's hwthreads), and `numaprobe probe
--tests peak_bandwidth --threads <threads>` (read and non-temporal write; its
node 0 -> node 0 runs), in alternating order so that drift in
the host's load hits both alike. The CPUs likwid-bench reports must be the
ones numaprobe's JSON names, or the script stops. Both count bytes loaded
(read) or stored (write), without write-allocate traffic.

Prints each round's figures and the paired ratios numaprobe / likwid-bench,
then their median per op. A numaprobe run whose outcome is not ok (the host got
busy) is repeated, and said so on stderr.

  bench/peak_vs_likwid.py --numaprobe build/release/numaprobe [--threads 2] [--rounds 10] [--size-mb 1024]

Standard library only; needs likwid-bench (Debian: likwid).
"""
import argparse
import json
import re
import statistics
import subprocess
import sys

PAIRS = [("load_avx", "read"), ("store_mem_avx", "write")]


def likwid(test, size_mb, threads):
    out = subprocess.run(["likwid-bench", "-t", test, "-w", f"M0:{size_mb}MB:{threads}"], check=True,
                         capture_output=True, text=True).stdout
    cpus = sorted({int(c) for c in re.findall(r"running on hwthread (\d+)", out)})
    return float(re.search(r"MByte/s:\s+([\d.]+)", out).group(1)) * 1e6, cpus


def numaprobe(binary, size_mb, threads, tries=3):
    for _ in range(tries):
        r = subprocess.run([binary, "probe", "--tests", "peak_bandwidth", "--threads", str(threads), "--format",
                            "json", "--bandwidth-buffer", f"{size_mb}MiB", "--lock-file", ""],
                           capture_output=True, text=True)
        records = [rec for rec in json.loads(r.stdout)["peak_bandwidth"] if rec["cpu_node"] == rec["mem_node"] == 0]
        bad = [rec for rec in records if rec["outcome"] != "ok"]
        if not bad:
            return {rec["op"]: (rec["median_bytes_per_second"], sorted(rec["cpus"])) for rec in records}
        print(f"(numaprobe: {bad[0]['outcome']}: {bad[0]['reason']}; repeated)", file=sys.stderr)
    sys.exit("numaprobe was not ok in 3 tries: the host is too busy to compare")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--numaprobe", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--size-mb", type=int, default=1024, help="buffer of each tool (likwid: split among threads)")
    args = p.parse_args()

    ratios = {op: [] for _, op in PAIRS}
    print(f"{'round':>5}  {'op':5}  {'likwid GB/s':>11}  {'numaprobe GB/s':>14}  {'ratio':>6}  cpus")
    for i in range(args.rounds):
        ours_first = i % 2 == 1
        ours = numaprobe(args.numaprobe, args.size_mb, args.threads) if ours_first else None
        theirs = {op: likwid(test, args.size_mb, args.threads) for test, op in PAIRS}
        if not ours_first:
            ours = numaprobe(args.numaprobe, args.size_mb, args.threads)
        for _, op in PAIRS:
            (l_bw, l_cpus), (n_bw, n_cpus) = theirs[op], ours[op]
            if l_cpus != n_cpus:
                sys.exit(f"likwid-bench ran on CPUs {l_cpus}, numaprobe on {n_cpus}: not the same CPUs")
            ratios[op].append(n_bw / l_bw)
            print(f"{i + 1:>5}  {op:5}  {l_bw / 1e9:>11.2f}  {n_bw / 1e9:>14.2f}  {n_bw / l_bw:>6.3f}  {n_cpus}")
    for op, values in ratios.items():
        print(f"{op}: median ratio {statistics.median(values):.3f} over {len(values)} rounds "
              f"(min {min(values):.3f}, max {max(values):.3f})")


if __name__ == "__main__":
    main()
