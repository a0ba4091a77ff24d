#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every dashboard query against a Prometheus holding a synthetic fleet:
how many rows (series) each panel returns and how long it takes.

The fleet: --hosts hosts (default 1,000) with --nodes NUMA nodes each (default
8, so 64 node pairs), four CPU models (one of them in two topologies),
latency per pair and bandwidth per pair and op (read, write and copy, as the
daemon's default plan; figure, recent median, baseline), SLIT
distances, probe successes and runs, host and build info. A few hosts are
made bad on purpose (latency drift, bandwidth drop, failing probe), so the
worst-k tables have rows; a few hosts' latency probe stopped succeeding half
an hour ago (stale). The series are written as OpenMetrics, turned into TSDB
blocks from --minutes before now to --lead minutes past it
(prometheus_backfill.py: no scraping, so one Prometheus holds a thousand
hosts cheaply; data past the end of the run keep every selector current at
Prometheus' default 5-minute lookback, which is what operators run). It
loads grafana/rules/recording.yaml,
and once every rule group has been evaluated --evaluations times, each panel
query of grafana/dashboards/*.json runs as Grafana would run it (instant for
tables and stats, a range query over the recorded window otherwise) with
every variable at All, except the host dashboard's instance; a repeated panel
runs once per value of its variable. The variables' own queries (label values
of their selectors) are timed too.

  bench/grafana_scale.py [--hosts 1000] [--nodes 8] [--lead 30] [--keep DIR] [--against REV]

With --against REV, each panel's query at git revision REV runs right after
the current one in the same Prometheus (REV's queries may read only series the
current recording rules record): before and after side by side. --against
may be given more than once.

Each query runs --repeat times in a row (the rule groups evaluating in the
same Prometheus slow any one run that meets them). Prints one line per query
and variable: rows (values), the median and slowest seconds; exits 1 if a
query fails, its median takes more than --max-seconds or a fleet table
returns more rows than its topk, or a variable has no values or takes more
than --max-seconds.
Needs prometheus and promtool (Debian: prometheus) and PyYAML.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import prometheus_backfill as pb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "grafana"))
import grafana_lib as g  # noqa: E402

MODELS = ["Xeon Gold 6338", "Xeon Platinum 8480+", "AMD EPYC 7543", "AMD EPYC 9654"]
# Local bandwidth per op (bytes/s): the three ops of the daemon's default plan,
# so the bandwidth panels read as many series as on a real fleet.
BANDWIDTH_OPS = {"read": 2.0e10, "write": 1.2e10, "copy": 1.5e10}
HOST = "host-0005:10062"  # the host dashboard's instance
STEP_S = 240  # sample spacing: below the 5 min lookback, few samples per series


def slit(nodes: int, a: int, b: int, wide: bool) -> int:
    if a == b:
        return 10
    same_socket = (a < nodes // 2) == (b < nodes // 2)
    return (12 if same_socket else 32) if wide else (11 if same_socket else 21)


def write_openmetrics(path: Path, hosts: int, nodes: int, start: int, end: int, now: int, seed: int = 1) -> int:
    """The fleet's series, grouped by metric family as OpenMetrics requires."""
    rnd = random.Random(seed)
    stamps = list(range(start, end + 1, STEP_S))
    fleet = []
    for h in range(hosts):
        model = MODELS[h % len(MODELS)]
        fleet.append({
            "instance": f"host-{h:04d}:10062",
            "model": model,
            # The last model comes in two topologies (e.g. SNC on / off).
            "wide": model == MODELS[-1] and h % 8 == 7,
            "drift": 1.10 if h % 97 == 5 else 1.0,   # ~10 hosts with +10% latency
            "drop": 0.80 if h % 89 == 7 else 1.0,    # ~11 hosts with -20% bandwidth
            "failing": h % 211 == 3,                 # ~5 hosts with a failing probe
            "stale": h % 101 == 13,                  # ~10 hosts whose latency probe stopped
        })
    pairs = [(a, b) for a in range(nodes) for b in range(nodes)]
    lines = 0

    def family(f, name, kind, series):
        nonlocal lines
        f.write(f"# TYPE {name} {kind}\n")
        for labels, value_at in series:
            text = ",".join(f'{k}="{v}"' for k, v in labels.items())
            for t in stamps:
                v = value_at(t)
                # Six digits for figures; whole seconds for timestamps (at six
                # digits a last success would be off by up to 5,000 s).
                f.write(f"{name}{{{text}}} {f'{v:.6g}' if abs(v) < 1e6 else f'{v:.0f}'} {t}\n")
                lines += 1

    def base(host):
        return {"job": "numaprobe", "instance": host["instance"]}

    # Each figure's value, noise drawn once: the worst-pair drift the daemon
    # publishes is computed from the same recent medians and baselines.
    values: dict[tuple, float] = {}

    def latency_value(host, a, b, kind):
        key = (host["instance"], a, b, None, kind)
        if key not in values:
            local = 1.0e-7 if host["model"].startswith("Xeon") else 1.1e-7
            factor = host["drift"] if kind != "baseline" else 1.0
            values[key] = local * (1 + 0.6 * (a != b)) * (1 + rnd.uniform(-0.01, 0.01)) * factor
        return values[key]

    def bandwidth_value(host, a, b, op, kind):
        key = (host["instance"], a, b, op, kind)
        if key not in values:
            factor = host["drop"] if kind != "baseline" else 1.0
            values[key] = BANDWIDTH_OPS[op] / (1 + 0.8 * (a != b)) * (1 + rnd.uniform(-0.02, 0.02)) * factor
        return values[key]

    def latency(host, a, b, kind):
        return (lambda v: lambda t: v)(latency_value(host, a, b, kind))

    def bandwidth(host, a, b, op, kind):
        return (lambda v: lambda t: v)(bandwidth_value(host, a, b, op, kind))

    def worst_latency_drift(host):
        ratios = [latency_value(host, a, b, "recent") / latency_value(host, a, b, "baseline") for a, b in pairs]
        return (lambda v: lambda t: v)(max(ratios))

    def cohort(host):
        """The cohort labels the daemon puts on numaprobe_host_info and the
        peer ratios (metrics_peers.cc)."""
        return {"cpu_model": host["model"], "numa_nodes": str(nodes),
                "numa_distance_sum": str(sum(slit(nodes, a, b, host["wide"]) for a, b in pairs))}

    def peer_ratio(host, a, b):
        """A remote pair's recent median over its CPU node's local pair's, as the daemon publishes it."""
        return (lambda v: lambda t: v)(latency_value(host, a, b, "recent") / latency_value(host, a, a, "recent"))

    def worst_bandwidth_drift(host, op):
        ratios = [bandwidth_value(host, a, b, op, "recent") / bandwidth_value(host, a, b, op, "baseline")
                  for a, b in pairs]
        return (lambda v: lambda t: v)(min(ratios))

    with path.open("w", encoding="utf-8") as f:
        for name, kind in (("numaprobe_memory_latency_seconds", "figure"),
                           ("numaprobe_memory_latency_recent_median_seconds", "recent"),
                           ("numaprobe_memory_latency_baseline_seconds", "baseline")):
            family(f, name, "gauge", [({**base(h), "cpu_node": a, "mem_node": b}, latency(h, a, b, kind))
                                      for h in fleet for a, b in pairs])
        family(f, "numaprobe_memory_latency_remote_local_ratio", "gauge",
               [({**base(h), "cpu_node": a, "mem_node": b}, (lambda r: lambda t: r)(1.6 if a != b else 1.0))
                for h in fleet for a, b in pairs])
        for name, kind in (("numaprobe_memory_bandwidth_bytes_per_second", "figure"),
                           ("numaprobe_memory_bandwidth_recent_median_bytes_per_second", "recent"),
                           ("numaprobe_memory_bandwidth_baseline_bytes_per_second", "baseline")):
            family(f, name, "gauge", [({**base(h), "cpu_node": a, "mem_node": b, "op": op},
                                       bandwidth(h, a, b, op, kind))
                                      for h in fleet for a, b in pairs for op in BANDWIDTH_OPS])
        family(f, "numaprobe_memory_latency_recent_remote_local_ratio", "gauge",
               [({**base(h), **cohort(h), "cpu_node": a, "mem_node": b}, peer_ratio(h, a, b))
                for h in fleet for a, b in pairs if a != b])
        family(f, "numaprobe_memory_latency_worst_pair_drift_ratio", "gauge",
               [(base(h), worst_latency_drift(h)) for h in fleet])
        family(f, "numaprobe_memory_bandwidth_worst_pair_drift_ratio", "gauge",
               [({**base(h), "op": op}, worst_bandwidth_drift(h, op)) for h in fleet for op in BANDWIDTH_OPS])
        family(f, "numaprobe_numa_distance", "gauge",
               [({**base(h), "cpu_node": a, "mem_node": b}, (lambda d: lambda t: d)(slit(nodes, a, b, h["wide"])))
                for h in fleet for a, b in pairs])
        stopped = now - 1800  # 6 refresh intervals ago: over NumaProbeProbeStale's 3
        family(f, "numaprobe_probe_last_success_timestamp_seconds", "gauge",
               [({**base(h), "probe": p, "cpu_node": a, "mem_node": b},
                 (lambda frozen: lambda t: min(t, stopped) - 60 if frozen else t - 60)(h["stale"] and p == "latency"))
                for h in fleet for p in ("latency", "bandwidth") for a, b in pairs])
        family(f, "numaprobe_probe_oldest_success_timestamp_seconds", "gauge",
               [({**base(h), "probe": p},
                 (lambda frozen: lambda t: min(t, stopped) - 60 if frozen else t - 60)(h["stale"] and p == "latency"))
                for h in fleet for p in ("latency", "bandwidth")])
        # A counter's samples, typed gauge: OpenMetrics would want the family
        # without _total; the TSDB stores the same series either way.
        family(f, "numaprobe_probe_runs_total", "gauge",
               [({**base(h), "probe": p, "result": r},
                 (lambda per: lambda t: (t - start) / 300 * per)(
                     nodes * nodes * (0.5 if h["failing"] and p == "bandwidth" and r == "not_allowed" else
                                      0.0 if r == "not_allowed" else 1.0)))
                for h in fleet for p in ("latency", "bandwidth", "core_to_core") for r in ("ok", "not_allowed")])
        for name, value in (("numaprobe_refresh_interval_seconds", 300), ("numaprobe_duty_cycle_ratio", 0.0018),
                            ("numaprobe_duty_cycle_budget_ratio", 0.002), ("numaprobe_baseline_complete", 1),
                            ("numaprobe_state_last_write_successful", 1),
                            ("numaprobe_config_last_reload_successful", 1), ("up", 1)):
            family(f, name, "gauge", [(base(h), (lambda v: lambda t: v)(value)) for h in fleet])
        family(f, "numaprobe_host_info", "gauge",
               [({**base(h), **cohort(h), "kernel": "6.1.0-18-amd64", "fingerprint": f"f{i}"},
                 lambda t: 1) for i, h in enumerate(fleet)])
        family(f, "numaprobe_baseline_info", "gauge",
               [({**base(h), "origin": "restored", "fingerprint": f"f{i}"}, lambda t: 1) for i, h in enumerate(fleet)])
        family(f, "numaprobe_build_info", "gauge",
               [({**base(h), "version": "0.1.0", "revision": "abc"}, lambda t: 1) for h in fleet])
        f.write("# EOF\n")
    return lines


def wait_for_rules(url: str, evaluations: int, interval_s: int, timeout_s: float) -> dict[str, float]:
    """Waits until every group has run `evaluations` times; its last evaluation times."""
    started = time.time()
    while True:
        groups = pb.api(url, "/api/v1/rules", {"type": "record"})["data"]["groups"]
        last = [g_["lastEvaluation"] for g_ in groups]
        done = groups and all(not t.startswith("0001") for t in last)
        if done and time.time() - started > evaluations * interval_s:
            return {g_["name"]: g_["evaluationTime"] for g_ in groups}
        if time.time() - started > timeout_s:
            raise SystemExit(f"recording rules not evaluated {evaluations} times in {timeout_s:.0f} s")
        time.sleep(5)


def dashboards_at(ref: str | None) -> list[dict]:
    """The dashboards of the working tree, or of git revision `ref`."""
    if ref is None:
        return list(g.load_dashboards().values())
    return [json.loads(subprocess.run(["git", "-C", str(g.DASHBOARD_DIR), "show", f"{ref}:./{p.name}"],
                                      check=True, capture_output=True, text=True).stdout)
            for p in g.dashboard_files()]


def resolve_variables(url: str, dash: dict, values: dict[str, str]):
    """Each query variable's values, asked of Prometheus as Grafana asks
    (label values of the selector) and timed, since a
    dashboard runs them before its panels. Include-All variables are at All,
    the host dashboard's instance at one host. Returns the substitution text,
    each variable's selected values and (name, values found, seconds)."""
    values, selected, timed = dict(values), {}, []
    for v, query in g.variable_queries(dash):
        selector, label = g.label_values_selector(query)
        t0 = time.monotonic()
        # No start and end: Grafana sends the time range, but here the rules'
        # samples go to the out-of-order head (the blocks reach past now),
        # which label values over a range do not see in Prometheus 2.42.
        res = pb.api(url, f"/api/v1/label/{label}/values", {"match[]": g.substitute(selector, values)})
        found = res.get("data") or []
        timed.append((v["name"], len(found) if res.get("status") == "success" else -1, time.monotonic() - t0))
        if v.get("includeAll"):
            selected[v["name"]] = (v, found)
            values[v["name"]] = v.get("allValue") or ".+"
        else:
            chosen = [HOST] if v["name"] == "instance" else found[:1]
            selected[v["name"]] = (v, chosen)
            values[v["name"]] = g.format_variable(v, chosen) if chosen else ""
    return values, selected, timed


def panel_cases(url: str, recorded_s: int, ref: str | None = None, timings: list | None = None):
    """(dashboard uid, panel, expr, instant) for every query, variables
    substituted; a repeated panel once per value of its variable, as Grafana
    draws one copy per value. The variables' own timings go to `timings`."""
    window = f"{max(60, recorded_s)}s"
    builtins = {"__rate_interval": "1m", "__interval": "60s", "__range": window, "__range_s": str(recorded_s)}
    for dash in dashboards_at(ref):
        values, selected, timed = resolve_variables(url, dash, builtins)
        if timings is not None:
            timings += [(dash["uid"], *t) for t in timed]
        for panel, t in g.iter_queries(dash):
            for extra in g.panel_copies(panel, selected):
                yield dash["uid"], panel, g.substitute(t["expr"], {**values, **extra}), bool(t.get("instant"))


def run_query(url: str, expr: str, instant: bool, recorded_s: int) -> tuple[int, float]:
    """Rows returned (-1 on an error, printed) and seconds taken, as Grafana
    would run the query: instant, or over the recorded window at 1-minute steps."""
    t0 = time.monotonic()
    if instant:
        res = pb.api(url, "/api/v1/query", {"query": expr})
    else:
        end = time.time()
        res = pb.api(url, "/api/v1/query_range", {"query": expr, "start": end - recorded_s, "end": end, "step": 60})
    took = time.monotonic() - t0
    if res.get("status") != "success":
        print(f"query failed: {res.get('error')}: {expr}", flush=True)
        return -1, took
    return len(res["data"]["result"]), took


def run_repeated(url: str, expr: str, instant: bool, recorded_s: int, times: int) -> tuple[int, float, float]:
    """Rows (-1 if any run failed), median and slowest seconds of `times` runs
    in a row. The rule groups evaluate in the same Prometheus every minute,
    taking a good share of the two cores: one run that meets an evaluation
    is slowed by it, and the median of a few is what a panel costs."""
    runs = [run_query(url, expr, instant, recorded_s) for _ in range(times)]
    rows = -1 if any(r < 0 for r, _ in runs) else max(r for r, _ in runs)
    return rows, statistics.median(t for _, t in runs), max(t for _, t in runs)


def topk_of(expr: str) -> int | None:
    m = re.search(r"topk\((\d+),", expr)
    return int(m.group(1)) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--minutes", type=int, default=40, help="history before now")
    ap.add_argument("--lead", type=int, default=30, help="minutes of data past now: the run must end before")
    ap.add_argument("--evaluations", type=int, default=3, help="rule evaluations before querying")
    ap.add_argument("--max-seconds", type=float, default=2.0, help="the most a query's median may take")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each query, one after the other")
    ap.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    ap.add_argument("--against", action="append", default=[],
                    help="git revision whose dashboard queries run beside the current ones (repeatable)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="numaprobe-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    now = int(time.time())
    om = work / "fleet.om"
    t0 = time.monotonic()
    lines = write_openmetrics(om, args.hosts, args.nodes, now - args.minutes * 60, now + args.lead * 60, now)
    print(f"generated {lines} samples for {args.hosts} hosts x {args.nodes} nodes"
          f" in {time.monotonic() - t0:.0f} s", flush=True)
    tsdb = work / "tsdb"
    t0 = time.monotonic()
    pb.create_blocks(om, tsdb)
    om.unlink()
    print(f"backfilled in {time.monotonic() - t0:.0f} s", flush=True)

    # Prometheus' default evaluation interval, which the rules are written
    # for (docs/detection.md, "Loading the rules"): at 1,000 hosts the rules
    # take a good share of the CPU the queries need, as in production.
    interval = 60
    rules = work / "recording.yaml"
    shutil.copyfile(g.RECORDING_RULES, rules)
    prom, url = pb.start(work, tsdb, [rules], f"{interval}s")
    failures = []
    try:
        started = time.time()
        eval_times = wait_for_rules(url, args.evaluations, interval, timeout_s=1800)
        recorded_s = int(time.time() - started)
        print("rule group evaluation: " + ", ".join(f"{k} {v:.2f} s" for k, v in eval_times.items()))
        # With --against, REV's query of the same panel runs right after the
        # current one (same Prometheus, same data, same load): the side-by-side
        # figures; with several revisions, each in turn. REV's queries may only
        # read series that the current recording rules still record.
        before = {ref: {} for ref in args.against}
        for ref in args.against:
            for uid, panel, expr, instant in panel_cases(url, recorded_s, ref):
                before[ref].setdefault((uid, panel["title"]), []).append((expr, instant))
        print(f"{'dashboard':16} {'rows':>6} {'median s':>8} {'max s':>6}"
              + "".join(f" {'at ' + r:>21}" for r in args.against) + "  panel")
        variables: list[tuple[str, str, int, float]] = []
        for uid, panel, expr, instant in panel_cases(url, recorded_s, timings=variables):
            rows, took, slowest = run_repeated(url, expr, instant, recorded_s, args.repeat)
            ref = ""
            for r in args.against:
                if before[r].get((uid, panel["title"])):
                    ref_rows, ref_took, ref_slowest = run_repeated(
                        url, *before[r][(uid, panel["title"])].pop(0), recorded_s, args.repeat)
                    ref += f" {ref_rows:>5} {ref_took:>8.3f} {ref_slowest:>6.2f}"
                else:
                    ref += f" {'-':>21}"
            print(f"{uid:16} {rows:>6} {took:>8.3f} {slowest:>6.2f}{ref}  {panel['title']}", flush=True)
            k = topk_of(expr)
            if rows < 0:
                failures.append(f"{uid} / {panel['title']}: query failed")
            elif took > args.max_seconds:
                failures.append(f"{uid} / {panel['title']}: {took:.2f} s")
            elif uid == "numaprobe-fleet" and panel["type"] == "table" and k is not None and rows > k:
                failures.append(f"{uid} / {panel['title']}: {rows} rows > topk {k}")
            elif uid == "numaprobe-fleet" and rows >= args.hosts > len(MODELS) * args.nodes ** 2:
                failures.append(f"{uid} / {panel['title']}: {rows} rows, one per host or more")
        for uid, name, found, took in variables:
            print(f"{uid:16} {found:>6} {took:>8.3f} {'':>6}  variable ${name}", flush=True)
            if found <= 0:
                failures.append(f"{uid} / ${name}: no values")
            elif took > args.max_seconds:
                failures.append(f"{uid} / ${name}: {took:.2f} s")
        if time.time() > now + args.lead * 60:
            failures.append(f"the run outlasted the data (--lead {args.lead}): the last queries saw none")
    finally:
        pb.stop(prom)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
