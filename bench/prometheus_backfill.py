# SPDX-License-Identifier: Apache-2.0
"""A real Prometheus over a backfilled TSDB, shared by the fleet-scale
benchmarks (grafana_scale.py, rule_cost.py): OpenMetrics text turned into TSDB
blocks by `promtool tsdb create-blocks-from openmetrics`, then one Prometheus
started on them. Nothing is scraped, so no ingestion competes with the rules
and the queries being measured.

Prometheus runs with an out-of-order window, so that its head takes the
recording rules' samples even where backfilled blocks reach past now (without
it the head refuses every sample older than the newest block's end). Data that
end before Prometheus starts need a longer lookback for instant selectors to
see their last samples (grafana_scale.py: 20 minutes); data that reach past the
end of the run keep every selector current at the default lookback (5
minutes), as in production (rule_cost.py).
"""
from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

OUT_OF_ORDER_WINDOW = "6h"


def create_blocks(openmetrics: Path, tsdb: Path) -> None:
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(tsdb)],
                   check=True, stdout=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(url: str, path: str, params: dict | None = None, timeout: float = 120) -> dict:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    try:
        with urllib.request.urlopen(f"{url}{path}{query}", timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:  # Prometheus answers errors (timeouts: 503) in JSON
        body = e.read()
        try:
            return json.loads(body)
        except ValueError:
            return {"status": "error", "error": f"HTTP {e.code}: {body[:200]!r}"}


def start(work: Path, tsdb: Path, rule_files: list[Path], evaluation_interval: str,
          lookback: str = "5m") -> tuple[subprocess.Popen, str]:
    """Prometheus on `tsdb` evaluating `rule_files`; returns once it is ready."""
    config = work / "prometheus.yml"
    config.write_text(json.dumps({"global": {"evaluation_interval": evaluation_interval},
                                  "storage": {"tsdb": {"out_of_order_time_window": OUT_OF_ORDER_WINDOW}},
                                  "rule_files": [str(r) for r in rule_files]}))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (work / "prometheus.log").open("w")
    prom = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tsdb}",
                             f"--web.listen-address=127.0.0.1:{port}", "--query.timeout=60s",
                             f"--query.lookback-delta={lookback}"], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if prom.poll() is not None:
            raise SystemExit(f"prometheus exited with {prom.returncode}; see {work / 'prometheus.log'}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=5) as r:
                if r.status == 200:
                    return prom, url
        except OSError:
            pass
        time.sleep(1)
    prom.terminate()
    raise SystemExit("prometheus not ready after 600 s")


def stop(prom: subprocess.Popen) -> None:
    prom.terminate()
    try:
        prom.wait(timeout=120)
    except subprocess.TimeoutExpired:
        prom.kill()
        prom.wait()
