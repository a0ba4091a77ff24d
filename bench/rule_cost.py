#!/usr/bin/env python3
"""Rule evaluation cost at fleet scale (docs/detection.md, "Cost at fleet
scale"): a real Prometheus scrapes HOSTS simulated numaprobe hosts and
evaluates grafana/rules/*.yaml; the script reports each group's
prometheus_rule_group_last_duration_seconds (median and maximum over the
evaluations after the rules' windows filled) and the series Prometheus holds.

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

Scrape and evaluation every minute (production defaults); the first
evaluations, before the 15- and 20-minute windows are full, are left out.
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

SOURCE_DIR = Path(__file__).resolve().parents[1]
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
HOSTS_PER_SHARD = 50


def host_lines(exposition: str) -> list[tuple[str, str, float]]:
    """(name, labels inside the braces, value) of every sample."""
    out = []
    for line in exposition.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        out.append((m.group(1), m.group(2) or "", float(m.group(3))))
    return out


class Fleet:
    """The shards' expositions: VARIANTS renderings per shard with different
    figure noise, served in turn, the scrape time put in at serve time."""

    VARIANTS = 2
    NOW = b"@NOW@"
    NOISY = ("numaprobe_memory_latency_seconds", "numaprobe_memory_bandwidth_bytes_per_second",
             "numaprobe_memory_latency_recent_median_seconds",
             "numaprobe_memory_bandwidth_recent_median_bytes_per_second", "numaprobe_duty_cycle_ratio")

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
                if name == "numaprobe_probe_last_success_timestamp_seconds":
                    parts.append(f"{name}{{{lab}}} @NOW@\n")
                    continue
                if name in self.NOISY:
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exposition", type=Path, help="one host's exposition (series-N.prom)")
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--minutes", type=int, default=25)
    ap.add_argument("--warmup", type=int, default=21, help="minutes before durations count (windows fill)")
    ap.add_argument("--rules", type=Path, default=SOURCE_DIR / "grafana" / "rules")
    args = ap.parse_args()
    # A SIGTERM (timeout, kill) still stops Prometheus in the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    samples = host_lines(args.exposition.read_text())
    fleet = Fleet(samples, args.hosts)
    srv, port = serve(fleet)
    print(f"{len(samples)} series per host x {args.hosts} hosts = {len(samples) * args.hosts} series, "
          f"{fleet.shards} scrape targets")
    with tempfile.TemporaryDirectory(prefix="numaprobe-rulecost-") as tmp:
        cfg = Path(tmp) / "prometheus.yml"
        rules = [args.rules / "recording.yaml", args.rules / "alerts.yaml"]
        cfg.write_text(prometheus_config(port, fleet.shards, rules))
        web = f"127.0.0.1:{srv.server_address[1] + 1}"
        log = (Path(tmp) / "prometheus.log").open("w")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/data",
                                 f"--web.listen-address={web}"], stdout=log, stderr=subprocess.STDOUT)
        durations: dict[str, list[float]] = {}
        try:
            t0 = time.monotonic()
            seen: dict[str, float] = {}
            while time.monotonic() - t0 < args.minutes * 60:
                time.sleep(15)
                try:
                    text = urllib.request.urlopen(f"http://{web}/metrics", timeout=10).read().decode()
                except OSError:
                    continue
                last = metric(text, "prometheus_rule_group_last_duration_seconds")
                stamp = metric(text, "prometheus_rule_group_last_evaluation_timestamp_seconds")
                for group, ts in stamp.items():
                    if ts and seen.get(group) != ts and time.monotonic() - t0 >= args.warmup * 60:
                        durations.setdefault(group, []).append(last[group])
                    seen[group] = ts
            series = metric(text, "prometheus_tsdb_head_series")[""]
            rss = metric(text, "process_resident_memory_bytes")[""]
        finally:
            prom.terminate()
            prom.wait(timeout=120)
            srv.shutdown()
    print(f"Prometheus head series {series:.0f}, resident {rss / 2**30:.2f} GiB")
    print("| group | evaluations | last duration: median | max |")
    print("|---|---|---|---|")
    for group, ds in sorted(durations.items()):
        print(f"| {group} | {len(ds)} | {statistics.median(ds):.3f} s | {max(ds):.3f} s |")


if __name__ == "__main__":
    main()
