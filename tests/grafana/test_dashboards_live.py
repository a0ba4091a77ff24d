# SPDX-License-Identifier: Apache-2.0
"""Integration: the real numaprobe daemon scraped by a real Prometheus (Debian's
`prometheus` package) on loopback, with grafana/rules/recording.yaml loaded.
Every query of every dashboard panel, with its template variables substituted
the way Grafana does, must evaluate through /api/v1/query and return data on
this machine, except the panels listed in multinode_panels.txt, which need two
or more NUMA nodes, and in quiet_panels.txt, which show only trouble: those only
have to evaluate without error. The panels that read the peak bandwidth recent
median, which needs 5 peak figures a minute apart, are evaluated with the last
figure in its place (PEAK_RECENT_MEDIAN below).

Runs only when NUMAPROBE_BIN names the daemon binary (ctest sets it).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import grafana_lib as g

NUMAPROBE_BIN = os.environ.get("NUMAPROBE_BIN")
pytestmark = pytest.mark.skipif(
    not NUMAPROBE_BIN, reason="NUMAPROBE_BIN is not set (ctest sets it to the built numaprobe binary)")

JOB = "numaprobe"
# How long the daemon and Prometheus get to produce every series the panels need
# (with PEAK_RECENT_MEDIAN stood in for): on a loaded 2-CPU machine all were
# there 15 s after the daemon started.
DATA_TIMEOUT_S = float(os.environ.get("NUMAPROBE_LIVE_TIMEOUT", "180"))
# The peak bandwidth recent median exists once a series has 5 figures, one a
# minute at the shortest probes.peak_bandwidth.interval: 2 to 4 minutes after
# the first (134 s for read, 252 s for write in one run), when every other
# series is there within seconds. The panels whose queries read it (the host's
# peak drift matrices and per-pair drift) are checked twice here: their query
# as it is must evaluate without error, and with the series' figure
# (PEAK_FIGURE) in its place it must return data, which the first figure and
# the baseline (baseline.rounds 1) give within seconds. The daemon labels the
# recent median as it labels the figure (docs/metrics.md, held to the daemon's
# output by tests/daemon/metrics_reference_test.cc), so this checks the
# query's selectors and its matching against the real daemon's baseline. Their
# values from recent medians are checked on series by test_dashboards.py
# (test_peak_drift_panels_on_series).
PEAK_RECENT_MEDIAN = "numaprobe_memory_peak_bandwidth_recent_median_bytes_per_second"
PEAK_FIGURE = "numaprobe_memory_peak_bandwidth_bytes_per_second"
# How long a dashboard variable may take to get values (a recording rule's first evaluation).
VARIABLE_TIMEOUT_S = 60
# Grafana's built-in variables. With a 1 s scrape interval Grafana would pick a
# few seconds for $__rate_interval; 1m keeps increase() meaningful for a daemon
# that bumps its counters once per round.
BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000",
            "__range": "5m", "__range_s": "300", "__range_ms": "300000"}


def daemon_config(state_dir: Path) -> str:
    """The daemon configuration for this test. It mirrors config/numaprobe.yaml
    (every probe and op, every allowed node pair, automatic targets), with
    smaller buffers and samples, a 2 s round interval, a larger duty-cycle
    budget and a one-round baseline (the least) so that every metric, the
    baseline and the recorded ratios exist within a minute, and a private
    state directory. Peak bandwidth, off by default, is on so that its panels
    are checked with figures: one CPU a node streaming small bursts and its
    idle gate open (max_busy 1: the test machine is busy), so that its first
    cycle, at start, gives every pair a figure and a baseline within seconds,
    and its shortest interval, a cycle a minute, gives a pair whose first run
    failed another within the wait."""
    return yaml.safe_dump({
        "probes": {
            "latency": {"stride_bytes": 128, "buffer_size": "64MiB", "samples": 5, "loads_per_sample": 5000},
            "bandwidth": {"ops": ["read", "write", "copy"], "buffer_size": "64MiB", "burst_size": "4MiB",
                          "bursts": 3},
            "core_to_core": {"samples": 5, "round_trips": 500},
            "peak_bandwidth": {"enabled": True, "interval": "1m", "duty_cycle": 0.2, "max_busy": 1,
                               "threads": 1, "burst_size": "4MiB", "bursts": 3},
        },
        "schedule": {"duty_cycle": 0.2, "interval": "2s", "jitter": 0.1},
        "memory": {"budget": "512MiB"},
        "baseline": {"rounds": 1},
        "state_directory": str(state_dir),
    }, sort_keys=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Process:
    def __init__(self, name: str, argv: list[str], log: Path):
        self.name, self.log = name, log
        self._out = open(log, "wb")
        self.proc = subprocess.Popen(argv, stdout=self._out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def tail(self, n: int = 40) -> str:
        lines = self.log.read_text(errors="replace").splitlines()
        return f"--- last lines of {self.name} log ({self.log}):\n" + "\n".join(lines[-n:])

    def wait_ready(self, url: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.proc.returncode} before {url} was ready\n{self.tail()}")
            try:
                status, body = http_get(url, timeout=2)
                if status == 200:
                    return
                last = f"HTTP {status}: {body[:200]!r}"
            except OSError as e:
                last = str(e)
            time.sleep(0.5)
        pytest.fail(f"{self.name}: {url} not ready after {timeout:.0f}s ({last})\n{self.tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()


@dataclass
class Stack:
    numaprobe_url: str
    prometheus_url: str
    target: str
    daemon: Process
    prometheus: Process

    def query(self, expr: str) -> dict:
        url = f"{self.prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        status, body = http_get(url, timeout=30)
        try:
            return json.loads(body)
        except ValueError:
            return {"status": "error", "errorType": f"HTTP {status}", "error": body[:300].decode(errors="replace")}

    def label_values(self, selector: str, label: str) -> list[str]:
        url = (f"{self.prometheus_url}/api/v1/label/{urllib.parse.quote(label)}/values?"
               + urllib.parse.urlencode({"match[]": selector}))
        status, body = http_get(url, timeout=30)
        res = json.loads(body)
        assert res["status"] == "success", f"label_values({selector}, {label}): {res}"
        return sorted(res["data"])


def prometheus_rules(dest: Path) -> Path:
    """recording.yaml with group intervals dropped: every group is evaluated at
    the test's 1 s evaluation interval instead of, e.g., every 2 minutes."""
    doc = yaml.safe_load(g.RECORDING_RULES.read_text(encoding="utf-8"))
    for group in doc["groups"]:
        group.pop("interval", None)
    dest.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dest


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grafana-live")
    binary = Path(NUMAPROBE_BIN)
    assert binary.is_file() and os.access(binary, os.X_OK), f"NUMAPROBE_BIN={binary} is not an executable"
    prometheus_bin = shutil.which("prometheus") or "/usr/bin/prometheus"
    assert Path(prometheus_bin).exists(), "prometheus not found: apt-get install prometheus"

    state = tmp / "state"
    state.mkdir()
    config = tmp / "numaprobe.yaml"
    config.write_text(daemon_config(state))
    port = free_port()
    target = f"127.0.0.1:{port}"
    daemon = Process("numaprobe", [str(binary), "serve", f"--web.listen-address={target}",
                                   "--config.file", str(config)], tmp / "numaprobe.log")
    procs = [daemon]
    try:
        daemon.wait_ready(f"http://{target}/-/ready", timeout=120)

        prom_config = tmp / "prometheus.yml"
        prom_config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
            "rule_files": [str(prometheus_rules(tmp / "recording.yaml"))],
            "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
        }, sort_keys=False))
        prom_port = free_port()
        prometheus = Process("prometheus", [prometheus_bin, f"--config.file={prom_config}",
                                            f"--storage.tsdb.path={tmp / 'tsdb'}",
                                            f"--web.listen-address=127.0.0.1:{prom_port}"],
                             tmp / "prometheus.log")
        procs.append(prometheus)
        prometheus.wait_ready(f"http://127.0.0.1:{prom_port}/-/ready", timeout=60)
        s = Stack(f"http://{target}", f"http://127.0.0.1:{prom_port}", target, daemon, prometheus)
        deadline = time.monotonic() + 60
        while not s.query(f'up{{job="{JOB}"}} == 1').get("data", {}).get("result"):
            if time.monotonic() > deadline:
                pytest.fail(f"Prometheus does not scrape {target}\n{prometheus.tail()}")
            time.sleep(1)
        yield s
    finally:
        for p in reversed(procs):
            p.stop()


@dataclass
class Case:
    dashboard: str
    panel: str
    ref: str
    expr: str
    multinode: bool
    last: str = "not evaluated"
    # The panel's own query where expr has PEAK_FIGURE for PEAK_RECENT_MEDIAN.
    shown: str = ""


def peak_stand_in(expr: str) -> str:
    """expr with the peak figure in place of the peak recent median."""
    return re.sub(rf"(?<![\w:]){PEAK_RECENT_MEDIAN}(?![\w:])", PEAK_FIGURE, expr)


def resolve_variables(stack: Stack, dash: dict) -> tuple[dict[str, str], dict[str, tuple[dict, list[str]]]]:
    """Grafana's substitution text per variable, and each query variable's values."""
    text = dict(BUILTINS)
    resolved = {}
    for v in dash["templating"]["list"]:
        if v["type"] == "datasource":
            continue
        query = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        selector, label = g.label_values_selector(query)
        # A variable read from a recording rule (the fleet's cohorts) has values
        # only after the rule's first evaluation, which on a busy machine can
        # come some seconds after the first scrape.
        deadline = time.monotonic() + VARIABLE_TIMEOUT_S
        while not (values := stack.label_values(g.substitute(selector, text), label)):
            if time.monotonic() > deadline:
                break
            time.sleep(1)
        assert values, f"{dash['uid']}: variable ${v['name']} ({query}) has no values after {VARIABLE_TIMEOUT_S} s"
        if v["name"] == "job":
            assert JOB in values, f"$job values {values} lack {JOB}"
            values = [JOB]
        elif v["name"] == "instance":
            assert stack.target in values, f"$instance values {values} lack {stack.target}"
            values = [stack.target]
        resolved[v["name"]] = (v, values)
        text[v["name"]] = g.format_variable(v, values)
    return text, resolved


def collect_cases(stack: Stack) -> list[Case]:
    multinode = g.multinode_panels() | g.quiet_panels()
    cases = []
    for dash in g.load_dashboards().values():
        text, resolved = resolve_variables(stack, dash)
        for panel, t in g.iter_queries(dash):
            for extra in g.panel_copies(panel, resolved):
                values = {**text, **extra}
                title = g.substitute(panel["title"], {k: v.replace("\\", "") for k, v in values.items()})
                expr = g.substitute(t["expr"], values)
                case = Case(dash["uid"], title, t["refId"], expr, (dash["uid"], panel["title"]) in multinode)
                if not case.multinode and peak_stand_in(expr) != expr:
                    case.expr, case.shown = peak_stand_in(expr), expr
                cases.append(case)
    return cases


def has_data(res: dict) -> bool:
    data = res.get("data", {})
    if data.get("resultType") in ("scalar", "string"):
        return True
    return bool(data.get("result"))


def test_every_dashboard_query_returns_data(stack, multinode_report):
    cases = collect_cases(stack)
    assert len(cases) > 40, f"only {len(cases)} queries found"
    assert any(c.shown for c in cases), f"no panel reads {PEAK_RECENT_MEDIAN}: drop the stand-in"
    waiting = [c for c in cases if not c.multinode]
    deadline = time.monotonic() + DATA_TIMEOUT_S
    while True:
        still = []
        for c in waiting:
            res = stack.query(c.expr)
            if res.get("status") != "success":
                c.last = f"error {res.get('errorType')}: {res.get('error')}"
                if res.get("errorType") == "bad_data":  # a parse error will not go away
                    pytest.fail(f"{c.dashboard} / {c.panel} [{c.ref}]: {c.last}\n  {c.expr}")
                still.append(c)
            elif not has_data(res):
                c.last = "no data"
                still.append(c)
        waiting = still
        if not waiting or time.monotonic() > deadline:
            break
        if stack.daemon.proc.poll() is not None:
            pytest.fail(f"numaprobe exited with {stack.daemon.proc.returncode}\n{stack.daemon.tail()}")
        time.sleep(1)

    errors = []
    for c in (c for c in cases if c.shown):
        res = stack.query(c.shown)
        if res.get("status") != "success":
            errors.append(f"{c.dashboard} / {c.panel} [{c.ref}]: error {res.get('errorType')}: {res.get('error')}"
                          f"\n  {c.shown}")
    for c in (c for c in cases if c.multinode):
        res = stack.query(c.expr)
        if res.get("status") != "success":
            errors.append(f"{c.dashboard} / {c.panel} [{c.ref}]: error {res.get('errorType')}: {res.get('error')}"
                          f"\n  {c.expr}")
        else:
            multinode_report.append(f"{c.dashboard} / {c.panel} [{c.ref}]: parse-clean, "
                                    f"{len(res['data']['result'])} series")
    errors += [f"{c.dashboard} / {c.panel} [{c.ref}]: {c.last}" + (" (figure for recent median)" if c.shown else "")
               + f"\n  {c.expr}" for c in waiting]
    assert not errors, (f"{len(errors)} of {len(cases)} dashboard queries failed after {DATA_TIMEOUT_S:.0f}s:\n"
                        + "\n".join(errors) + "\n" + stack.daemon.tail(15))


def test_exposition_has_the_contract_metrics(stack):
    """Every metric of contract_metrics.txt (what the dashboards and rules may use)
    is in the daemon's /metrics."""
    status, body = http_get(f"{stack.numaprobe_url}/metrics", timeout=10)
    assert status == 200
    exposed = set()
    for line in body.decode().splitlines():
        if line.startswith("# TYPE "):
            exposed.add(line.split()[2])
        elif line and not line.startswith("#"):
            exposed.add(line.split("{")[0].split()[0])
    missing = g.contract_metrics() - exposed
    assert not missing, f"contract metrics missing from {stack.numaprobe_url}/metrics: {sorted(missing)}"
