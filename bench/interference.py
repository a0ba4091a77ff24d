#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the daemon's probes cost a workload running beside them.

Two co-runners (bench/corunner.cc), each pinned to one CPU for --seconds:
  stream - a copy loop over 2 x 128 MiB: bandwidth-bound; reports GB/s;
  chase  - a dependent pointer chase over 256 MiB: latency-sensitive; reports
           the mean latency of every 10 ms window, and their p50 and p99.
Each runs with the daemon off, at the default budget (config/numaprobe.yaml)
and at 10x the default duty cycle; the configurations are interleaved and
repeated (--reps) so slow drift of a shared machine hits them alike. The daemon
is started 0.5 s before the co-runner, so each window holds its first probes
(a latency probe, then bandwidth visits as the duty cycle allows): the busiest
stretch of its life, not its steady state.

The p99 of a shared machine moves by itself (stalls of the host, other
tenants), so for the chase the script also attributes windows: the daemon runs
with debug logs, which time every probe ("starting X" to "X: ok"), and the
co-runner writes every window's start (--trace). It reports the p99 of the
windows outside any probe (+/- one window) and how many windows during probes
were slower than that: the daemon's own share of the tail.

--before BINARY adds a fourth configuration, the default budget run by another
numaprobe binary (an older build), interleaved with the rest: a before/after
of a change to the probes, side by side in one run.

--peak replaces the 10x configuration by two with peak bandwidth enabled in
the daemon (every CPU of a node streaming, on its schedule of its own): at
its defaults (the idle gate, probes.peak_bandwidth.max_busy) and with the
gate off (max_busy 1), so that a peak run's own harm shows; each run's peak
runs are counted by outcome from the daemon's log. --modes picks the
co-runners (stream, chase).

Usage: bench/interference.py BUILD_DIR [--cpu 0] [--seconds 30] [--reps 3] [--before BINARY] [--peak]
                              [--modes stream,chase]
Prints a Markdown table for docs/performance.md. Not a test: figures depend on
the machine; the goal (throughput >= 99.5% of daemon-off, p99 within noise) is
reported, not asserted.
"""
import argparse
import datetime
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def config_with(tmp, duty_cycle, peak=None):
    """The shipped config (every key at its default) with schedule.duty_cycle
    set, a state directory of its own and, if `peak` is given, that
    probes.peak_bandwidth section (a YAML flow mapping)."""
    with open(os.path.join(SRC, "config", "numaprobe.yaml")) as f:
        text = f.read()
    text += f"\nschedule:\n  duty_cycle: {duty_cycle}\nstate_directory: {tmp}/state\n"
    name = f"numaprobe-{duty_cycle}"
    if peak:
        text += f"probes:\n  peak_bandwidth: {peak}\n"
        name += "-peak-" + re.sub(r"\W+", "_", peak)
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def default_duty_cycle():
    """schedule.duty_cycle as the shipped config documents its default (the
    commented line `#   duty_cycle: 0.002`)."""
    with open(os.path.join(SRC, "config", "numaprobe.yaml")) as f:
        return float(re.search(r"(?m)^#?\s*duty_cycle:\s*([0-9.]+)", f.read()).group(1))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def probe_spans(log_text):
    """(start, end) unix seconds of every probe the daemon's debug log timed."""
    events = []
    for m in re.finditer(r'(?m)^ts=(\S+) level=\w+ msg="(.*?)"', log_text):
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ")
        events.append((t.replace(tzinfo=datetime.timezone.utc).timestamp(), m.group(2)))
    spans = []
    for i, (t0, msg) in enumerate(events):
        if not msg.startswith("starting "):
            continue
        task = msg[len("starting "):]
        end = next((t for t, later in events[i + 1:] if later.startswith(task + ":")), None)
        if end is not None:
            spans.append((t0, end))
    return spans


def percentile(values, p):
    values = sorted(values)
    return values[int(p * (len(values) - 1))] if values else 0.0


def attribute(trace_path, spans, window=0.01):
    """The chase's tail without the windows that overlapped a probe, and the
    probe windows slower than it."""
    windows = [tuple(map(float, line.split())) for line in open(trace_path)]
    during = lambda t: any(a - window <= t <= b for a, b in spans)
    rest = [v for t, v in windows if not during(t)]
    probing = [v for t, v in windows if during(t)]
    p99_rest = percentile(rest, 0.99)
    return {"p99_outside_probes_ns": p99_rest, "windows_during_probes": len(probing),
            "probe_windows_above_that_p99": sum(v > p99_rest for v in probing)}


PEAK_OUTCOME = re.compile(r'msg="peak \w+ bandwidth node \d+ -> node \d+: (\w+)')


def run_once(build, mode, cpu, seconds, config, binary, tmp):
    daemon = None
    log_path = os.path.join(tmp, "daemon.log")
    trace_path = os.path.join(tmp, "windows.trace")
    if config:
        with open(log_path, "w") as log:
            daemon = subprocess.Popen([binary, "serve", "--config.file", config, "--log.level", "debug",
                                       "--web.listen-address", "127.0.0.1:0"],
                                      stdout=subprocess.DEVNULL, stderr=log)
        time.sleep(0.5)  # the window then holds the daemon's first probes, paced from there
    try:
        c0 = cpu_seconds(daemon.pid) if daemon else 0
        cmd = [os.path.join(build, "bench", "corunner"), "--mode", mode, "--cpu", str(cpu), "--seconds", str(seconds)]
        if mode == "chase":
            cmd += ["--trace", trace_path]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        used = cpu_seconds(daemon.pid) - c0 if daemon else 0
    finally:
        if daemon:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=30)
    result = json.loads(out)
    result["daemon_cpu_seconds"] = used
    if daemon:
        outcomes = PEAK_OUTCOME.findall(open(log_path).read())
        result["peak_runs"] = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    if mode == "chase":
        result.update(attribute(trace_path, probe_spans(open(log_path).read()) if daemon else []))
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--before", help="another numaprobe binary, run at the default budget too")
    ap.add_argument("--peak", action="store_true", help="peak bandwidth on (gate at its default, and off) "
                    "instead of 10x")
    ap.add_argument("--modes", default="stream,chase")
    args = ap.parse_args()
    modes = args.modes.split(",")
    tmp = tempfile.mkdtemp(prefix="numaprobe-interference-")
    duty = default_duty_cycle()
    binary = os.path.join(args.build, "numaprobe")
    configs = [("off", None, None), (f"default ({duty * 100:g}%)", config_with(tmp, duty), binary)]
    if args.peak:
        configs[1:] = [("default + peak", config_with(tmp, duty, "{enabled: true}"), binary),
                       ("default + peak, gate off", config_with(tmp, duty, "{enabled: true, max_busy: 1}"), binary)]
    else:
        configs.append((f"10x ({duty * 1000:g}%)", config_with(tmp, duty * 10), binary))
    if args.before:
        configs.insert(1, (f"default, before ({duty * 100:g}%)", config_with(tmp, duty), args.before))
    results = {(mode, name): [] for mode in modes for name, _, _ in configs}
    for rep in range(args.reps):
        for mode in modes:
            for name, config, daemon_binary in configs:
                r = run_once(args.build, mode, args.cpu, args.seconds, config, daemon_binary, tmp)
                results[(mode, name)].append(r)
                print(f"rep {rep} {mode:6} {name:16} {json.dumps(r)}", file=sys.stderr, flush=True)

    print(f"Co-runner pinned to cpu {args.cpu}, {args.seconds:g} s per run, {args.reps} interleaved repetitions "
          f"(median of runs shown).\n")
    print("| co-runner | daemon | figure | vs daemon off | daemon CPU in the run | peak runs by outcome, per run |")
    print("|---|---|---|---|---|---|")

    def peak_runs(runs):
        return "; ".join(", ".join(f"{o} {n}" for o, n in r.get("peak_runs", {}).items()) or "none" for r in runs)

    if "stream" in modes:
        off_bw = statistics.median(r["bytes_per_second"] for r in results[("stream", "off")])
        for name, _, _ in configs:
            runs = results[("stream", name)]
            bw = statistics.median(r["bytes_per_second"] for r in runs)
            cpu = statistics.median(r["daemon_cpu_seconds"] for r in runs)
            spread = (max(r["bytes_per_second"] for r in runs) - min(r["bytes_per_second"] for r in runs)) / bw
            print(f"| stream copy | {name} | {bw / 1e9:.3f} GB/s (run spread {spread * 100:.1f}%) | "
                  f"{bw / off_bw * 100:.2f}% | {cpu:.2f} s | {peak_runs(runs)} |")
    if "chase" in modes:
        off_p99 = statistics.median(r["p99_ns"] for r in results[("chase", "off")])
        off_p50 = statistics.median(r["p50_ns"] for r in results[("chase", "off")])
        for name, _, _ in configs:
            runs = results[("chase", name)]
            p50 = statistics.median(r["p50_ns"] for r in runs)
            p99 = statistics.median(r["p99_ns"] for r in runs)
            cpu = statistics.median(r["daemon_cpu_seconds"] for r in runs)
            p99s = [r["p99_ns"] for r in results[("chase", "off")]]
            print(f"| chase (10 ms windows) | {name} | p50 {p50:.1f} ns, p99 {p99:.1f} ns | "
                  f"p50 {p50 / off_p50 * 100:.1f}%, p99 {p99 / off_p99 * 100:.1f}% (daemon-off p99 range "
                  f"{min(p99s):.1f}-{max(p99s):.1f} ns) | {cpu:.2f} s | {peak_runs(runs)} |")
        print_attribution(configs, results)


def print_attribution(configs, results):
    print("\nThe chase's tail, attributed (per run: p99 of all windows / of the windows outside any probe; "
          "windows during probes, and how many of them were slower than that p99):\n")
    print("| daemon | p99 all / outside probes, per run | the probes' share of p99, median (range) | "
          "windows during probes: slower than p99 outside, per run |")
    print("|---|---|---|---|")
    for name, config, _ in configs:
        if config is None:
            continue
        runs = results[("chase", name)]
        shares = [r["p99_ns"] / r["p99_outside_probes_ns"] - 1 for r in runs]
        per_run = ", ".join(f"{r['p99_ns']:.1f} / {r['p99_outside_probes_ns']:.1f}" for r in runs)
        windows = ", ".join(f"{r['windows_during_probes']}: {r['probe_windows_above_that_p99']}" for r in runs)
        print(f"| {name} | {per_run} ns | {statistics.median(shares) * 100:+.1f}% "
              f"({min(shares) * 100:+.1f}% to {max(shares) * 100:+.1f}%) | {windows} |")


if __name__ == "__main__":
    main()
