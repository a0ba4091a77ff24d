#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rule evaluation cost at fleet scale (docs/detection.md, "Cost at fleet
scale"): a real Prometheus holds HOSTS simulated numaprobe hosts and
evaluates grafana/rules/*.yaml; the script reports each group's
prometheus_rule_group_last_duration_seconds (median and maximum over the
evaluations counted) and the series Prometheus holds.

Two ways to fill Prometheus:

- scraping (default): Prometheus scrapes the hosts every minute, so the rules
  compete with ingesting every host's series;
- --backfill: the hosts' samples at one a minute, from --history minutes
  before now to past the end of the run, are written as TSDB blocks first
  (prometheus_backfill.py) and Prometheus only evaluates rules. With --against REF it evaluates the rule files of the git
  revision REF beside the current ones (groups renamed NAME@REF, recorded
  series prefixed `ref1_`), on the same data in the same process, and prints
  the ratio per group: on a busy machine that ratio is what is honest, the
  seconds are upper bounds. --against may be given more than once (the
  second revision's series are prefixed `ref2_`, and so on).

Each simulated host exports exactly what the daemon exports on an N-node host:
the exposition written by tests/daemon/series_count_test.cc (the default plan
on a synthetic N-node topology, every figure, baseline, spread and recent
median published), with an `instance` label per host. A local HTTP server
serves the hosts in shards (honor_labels, one scrape target per shard);
last-success timestamps are the scrape time, so that no staleness alert fires,
and the figures carry 1% noise (two renderings served in turn), so that chunks
hold changing samples.

  NUMAPROBE_SERIES_DUMP_DIR=/tmp/series build/release/tests/daemon/daemon_test \\
      --gtest_filter='SeriesCount.*'
  bench/rule_cost.py /tmp/series/series-8.prom --hosts 1000 --minutes 25
  bench/rule_cost.py /tmp/series/series-8.prom --backfill --against main --hosts 500

Scrape and evaluation every minute (production defaults). Scraping: the first
evaluations, before the 15- and 20-minute windows are full, are left out.
Backfill: the evaluations of the first --settle minutes (Prometheus merges
the shards' overlapping blocks) and each group's first are left out.
In both, every host is healthy and exports a refresh interval (the dump's
own is 0, which would make every pair stale and every staleness alert fire).
"""
from __future__ import annotations

import argparse
import http.server
import random
import re
import shutil
import signal
import sys
import socketserver
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import prometheus_backfill as pb

SOURCE_DIR = Path(__file__).resolve().parents[1]
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
HOSTS_PER_SHARD = 50
# The figures that change from round to round: simulated with 1% noise so
# that chunks hold changing samples.
NOISY = ("numaprobe_memory_latency_seconds", "numaprobe_memory_bandwidth_bytes_per_second",
         "numaprobe_memory_latency_recent_median_seconds",
         "numaprobe_memory_bandwidth_recent_median_bytes_per_second", "numaprobe_duty_cycle_ratio",
         "numaprobe_memory_latency_worst_pair_drift_ratio", "numaprobe_memory_bandwidth_worst_pair_drift_ratio",
         "numaprobe_memory_latency_recent_remote_local_ratio")
# Timestamps of the last success (per pair, and each probe's oldest): a healthy
# host's are a minute old, whenever they are read.
LAST_SUCCESS = ("numaprobe_probe_last_success_timestamp_seconds", "numaprobe_probe_oldest_success_timestamp_seconds")


def host_lines(exposition: str) -> list[tuple[str, str, float]]:
    """(name, labels inside the braces, value) of every sample."""
    out = []
    for line in exposition.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        out.append((m.group(1), m.group(2) or "", float(m.group(3))))
    return out


def healthy(samples: list[tuple[str, str, float]], refresh_s: int) -> list[tuple[str, str, float]]:
    """The dump's samples as a healthy host publishes them. The dump has a
    refresh interval of 0 (no round ran), which would make every pair stale
    against 3 x 0 seconds, and SLIT distances of 0 (a synthetic topology),
    which would leave every rule that finds the local pair (distance 10)
    without input: here 10 on the diagonal, 21 elsewhere, and the cohort
    labels (numa_nodes, numa_distance_sum) to match."""
    distances = []
    for name, labels, _ in samples:
        if name == "numaprobe_numa_distance":
            nodes = re.findall(r'(?:cpu|mem)_node="(\d+)"', labels)
            distances.append(10 if nodes[0] == nodes[1] else 21)
    cohort = f'numa_distance_sum="{sum(distances)}",numa_nodes="{distances.count(10)}"'
    out = []
    for name, labels, value in samples:
        if name == "numaprobe_refresh_interval_seconds":
            value = float(refresh_s)
        elif name == "numaprobe_numa_distance":
            nodes = re.findall(r'(?:cpu|mem)_node="(\d+)"', labels)
            value = 10.0 if nodes[0] == nodes[1] else 21.0
        labels = re.sub(r'numa_distance_sum="\d+",numa_nodes="\d+"', cohort, labels)
        out.append((name, labels, value))
    return out


class Fleet:
    """The shards' expositions: VARIANTS renderings per shard with different
    figure noise, served in turn, the scrape time put in at serve time."""

    VARIANTS = 2
    NOW = b"@NOW@"

    def __init__(self, samples, hosts: int, seed: int = 1):
        self.samples, self.hosts = samples, hosts
        self.rng = random.Random(seed)
        self.shards = (hosts + HOSTS_PER_SHARD - 1) // HOSTS_PER_SHARD
        self.bodies = [[self.render(shard) for _ in range(self.VARIANTS)] for shard in range(self.shards)]
        self.scrapes = [0] * self.shards

    def render(self, shard: int) -> bytes:
        parts = []
        for h in range(shard * HOSTS_PER_SHARD, min(self.hosts, (shard + 1) * HOSTS_PER_SHARD)):
            inst = f'instance="host{h}:10062"'
            for name, labels, value in self.samples:
                lab = f"{inst},{labels}" if labels else inst
                if name in LAST_SUCCESS:
                    parts.append(f"{name}{{{lab}}} @NOW@\n")
                    continue
                if name in NOISY:
                    value *= 1 + self.rng.gauss(0, 0.01)
                parts.append(f"{name}{{{lab}}} {value:.6g}\n")
        return "".join(parts).encode()

    def body(self, shard: int) -> bytes:
        self.scrapes[shard] += 1
        body = self.bodies[shard][self.scrapes[shard] % self.VARIANTS]
        return body.replace(self.NOW, str(int(time.time())).encode())


def serve(fleet: Fleet) -> tuple[socketserver.TCPServer, int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            m = re.match(r"/metrics\?shard=(\d+)", self.path)
            body = fleet.body(int(m.group(1))) if m else b""
            self.send_response(200 if m else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def prometheus_config(port: int, shards: int, rules: list[Path]) -> str:
    targets = ", ".join(f'"shard{i}"' for i in range(shards))
    files = "\n".join(f"  - {r}" for r in rules)
    return f"""global:
  scrape_interval: 1m
  evaluation_interval: 1m
  scrape_timeout: 50s
rule_files:
{files}
scrape_configs:
  - job_name: numaprobe
    honor_labels: true
    static_configs:
      - targets: [{targets}]
    relabel_configs:
      - source_labels: [__address__]
        regex: shard(\\d+)
        target_label: __param_shard
      - target_label: __address__
        replacement: 127.0.0.1:{port}
"""


def metric(text: str, name: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            m = re.search(r'rule_group="[^"]*;([^"]+)"', line)
            out[m.group(1) if m else ""] = float(line.rsplit(" ", 1)[1])
    return out


def collect(url: str, seconds: float, count_after: float, max_rss: float) -> tuple[dict, dict, str, dict]:
    """Polls Prometheus for `seconds`: each group's last duration and each
    rule's evaluation time, once per evaluation, counted after `count_after`
    seconds (groups) or from each group's second evaluation on. Stops early
    if Prometheus grows past `max_rss` bytes. Returns the groups' and the
    rules' durations, the last /metrics text and the number of pending or
    firing alerts per rule at the end (a healthy fleet has none)."""
    groups: dict[str, list[float]] = {}
    rules: dict[tuple[str, str], list[float]] = {}
    seen: dict[str, float] = {}
    evaluations: dict[str, int] = {}
    text = ""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(10)
        try:
            text = urllib.request.urlopen(f"{url}/metrics", timeout=30).read().decode()
            api = pb.api(url, "/api/v1/rules", timeout=30)["data"]["groups"]
        except (OSError, KeyError):
            continue
        if metric(text, "process_resident_memory_bytes")[""] > max_rss:
            print(f"Prometheus resident memory above {max_rss / 2**30:.1f} GiB: stopped", flush=True)
            break
        last = metric(text, "prometheus_rule_group_last_duration_seconds")
        stamp = metric(text, "prometheus_rule_group_last_evaluation_timestamp_seconds")
        for group, ts in stamp.items():
            if ts and seen.get(group) != ts:
                evaluations[group] = evaluations.get(group, 0) + 1
                if time.monotonic() - t0 >= count_after and evaluations[group] > 1:
                    groups.setdefault(group, []).append(last[group])
                    for g in api:
                        if g["name"] == group:
                            for r in g["rules"]:
                                rules.setdefault((group, r["name"]), []).append(r["evaluationTime"])
            seen[group] = ts
    res = pb.api(url, "/api/v1/query", {"query": "count by (alertname) (ALERTS)"}, timeout=60)
    alerts = {r["metric"]["alertname"]: int(r["value"][1]) for r in res.get("data", {}).get("result", [])}
    return groups, rules, text, alerts


def scrape_mode(args, samples) -> tuple[dict, dict, str, dict]:
    fleet = Fleet(samples, args.hosts)
    srv, port = serve(fleet)
    print(f"{fleet.shards} scrape targets")
    with tempfile.TemporaryDirectory(prefix="numaprobe-rulecost-") as tmp:
        cfg = Path(tmp) / "prometheus.yml"
        rules = [args.rules / "recording.yaml", args.rules / "alerts.yaml"]
        cfg.write_text(prometheus_config(port, fleet.shards, rules))
        web = f"127.0.0.1:{srv.server_address[1] + 1}"
        log = (Path(tmp) / "prometheus.log").open("w")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/data",
                                 f"--web.listen-address={web}"], stdout=log, stderr=subprocess.STDOUT)
        try:
            return collect(f"http://{web}", args.minutes * 60, args.warmup * 60, args.max_rss_gib * 2**30)
        finally:
            pb.stop(prom)
            srv.shutdown()


def write_openmetrics(path: Path, samples, hosts: range, start: int, end: int, seed: int = 1) -> int:
    """The series of `hosts` at one sample a minute from start to end, grouped
    by family as OpenMetrics wants; counters grow, figures alternate between
    two noisy values, last-success timestamps follow the sample time."""
    rng = random.Random(seed)
    stamps = list(range(start, end + 1, 60))
    families: dict[str, list[tuple[str, float]]] = {}
    for name, labels, value in samples:
        families.setdefault(name, []).append((labels, value))
    families["up"] = [("", 1.0)]
    lines = 0
    with path.open("w", encoding="utf-8") as f:
        for name, series in families.items():
            # Typed gauge: OpenMetrics wants a counter family without _total;
            # the TSDB stores the same series either way.
            f.write(f"# TYPE {name} gauge\n")
            for h in hosts:
                inst = f'job="numaprobe",instance="host{h}:10062"'
                for labels, value in series:
                    head = f"{name}{{{inst},{labels}}} " if labels else f"{name}{{{inst}}} "
                    if name in LAST_SUCCESS:
                        f.writelines(f"{head}{t - 30} {t}\n" for t in stamps)
                    elif name.endswith("_total"):
                        f.writelines(f"{head}{value * (1 + (t - start) / 1800):.6g} {t}\n" for t in stamps)
                    elif name in NOISY:
                        v = [f"{value * (1 + rng.gauss(0, 0.01)):.6g}" for _ in range(2)]
                        f.writelines(f"{head}{v[i % 2]} {t}\n" for i, t in enumerate(stamps))
                    else:
                        f.writelines(f"{head}{value:.6g} {t}\n" for t in stamps)
                    lines += len(stamps)
        f.write("# EOF\n")
    return lines


def rules_at(ref: str, dest: Path, prefix: str) -> list[Path]:
    """The rule files of git revision `ref`, renamed so that they can run
    beside the current ones: groups NAME@REF, recorded series PREFIX NAME."""
    texts = {f: subprocess.run(["git", "-C", str(SOURCE_DIR), "show", f"{ref}:grafana/rules/{f}"],
                               check=True, capture_output=True, text=True).stdout
             for f in ("recording.yaml", "alerts.yaml")}
    recorded = {n for t in texts.values() for n in re.findall(r"^\s*- record: (\S+)$", t, re.M)}
    out = []
    for f, text in texts.items():
        text = re.sub(r"^(- name: )(\S+)$", rf"\g<1>\g<2>@{ref}", text, flags=re.M)
        for n in recorded:
            text = re.sub(rf"(?<![\w:]){re.escape(n)}(?![\w:])", f"{prefix}{n}", text)
        out.append(dest / f"{ref}-{f}")
        out[-1].write_text(text)
    return out


def backfill_mode(args, samples) -> tuple[dict, dict, str, dict]:
    work = Path(tempfile.mkdtemp(prefix="numaprobe-rulecost-"))
    try:
        # The data reach past the end of the run, so that every evaluation
        # sees full windows and current samples at the default lookback.
        # promtool holds a whole input file in memory: the hosts are written
        # and backfilled in shards, as overlapping blocks that Prometheus merges.
        start = int(time.time()) - args.history * 60
        end = int(time.time()) + (args.lead + args.minutes + 5) * 60
        om = work / "fleet.om"
        t0 = time.monotonic()
        lines = 0
        for first in range(0, args.hosts, args.shard):
            lines += write_openmetrics(om, samples, range(first, min(args.hosts, first + args.shard)), start, end)
            pb.create_blocks(om, work / "tsdb")
            om.unlink()
        print(f"generated and backfilled {lines} samples in {time.monotonic() - t0:.0f} s", flush=True)
        if time.monotonic() - t0 > args.lead * 60:
            raise SystemExit(f"backfilling took longer than --lead {args.lead} minutes: the data end too early")
        rules = [args.rules / "recording.yaml", args.rules / "alerts.yaml"]
        for i, ref in enumerate(args.against, 1):
            rules += rules_at(ref, work, f"ref{i}_")
        prom, url = pb.start(work, work / "tsdb", rules, "1m")
        try:
            return collect(url, args.minutes * 60, args.settle * 60, args.max_rss_gib * 2**30)
        finally:
            pb.stop(prom)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exposition", type=Path, help="one host's exposition (series-N.prom)")
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--minutes", type=int, default=25, help="minutes of rule evaluation")
    ap.add_argument("--warmup", type=int, default=21, help="scraping: minutes before durations count (windows fill)")
    ap.add_argument("--rules", type=Path, default=SOURCE_DIR / "grafana" / "rules")
    ap.add_argument("--refresh", type=int, default=1800, help="the hosts' refresh interval, seconds")
    ap.add_argument("--backfill", action="store_true", help="backfilled TSDB instead of scraping")
    ap.add_argument("--history", type=int, default=65, help="backfill: minutes of history (1 h windows fill)")
    ap.add_argument("--lead", type=int, default=15, help="backfill: minutes generating and backfilling may take")
    ap.add_argument("--shard", type=int, default=250, help="backfill: hosts per promtool run")
    ap.add_argument("--settle", type=int, default=2, help="backfill: minutes before durations count (block merge)")
    ap.add_argument("--against", action="append", default=[],
                    help="backfill: git revision whose rules run beside the current ones (repeatable)")
    ap.add_argument("--max-rss-gib", type=float, default=10.0, help="stop when Prometheus grows past this")
    args = ap.parse_args()
    # A SIGTERM (timeout, kill) still stops Prometheus in the finally blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    samples = healthy(host_lines(args.exposition.read_text()), args.refresh)
    print(f"{len(samples)} series per host x {args.hosts} hosts = {len(samples) * args.hosts} series", flush=True)
    groups, rules, text, alerts = (backfill_mode if args.backfill else scrape_mode)(args, samples)
    series = metric(text, "prometheus_tsdb_head_series")[""]
    rss = metric(text, "process_resident_memory_bytes")[""]
    missed = metric(text, "prometheus_rule_group_iterations_missed_total")
    print(f"Prometheus head series {series:.0f}, resident {rss / 2**30:.2f} GiB")
    print("| group | evaluations | last duration: median | max | missed |")
    print("|---|---|---|---|---|")
    for group, ds in sorted(groups.items()):
        print(f"| {group} | {len(ds)} | {statistics.median(ds):.3f} s | {max(ds):.3f} s | {missed.get(group, 0):.0f} |")
    for against in args.against:
        print(f"\n| group | median now / median at {against} |\n|---|---|")
        for group, ds in sorted(groups.items()):
            old = groups.get(f"{group}@{against}")
            if old:
                print(f"| {group} | {statistics.median(ds) / statistics.median(old):.2f} |")
        # Groups split or added count in the total.
        now = sum(statistics.median(ds) for g, ds in groups.items() if "@" not in g)
        ref = sum(statistics.median(ds) for g, ds in groups.items() if g.endswith(f"@{against}"))
        print(f"| every group, summed | {now / ref:.2f} |")
    print(f"\nalerts pending or firing: {alerts or 'none'}")
    print("\n| rule (group), the 20 slowest | median evaluation |\n|---|---|")
    for (group, rule), ds in sorted(rules.items(), key=lambda kv: -statistics.median(kv[1]))[:20]:
        print(f"| {rule} ({group}) | {statistics.median(ds):.3f} s |")


if __name__ == "__main__":
    main()
