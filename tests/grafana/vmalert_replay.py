# SPDX-License-Identifier: Apache-2.0
"""The detection scenarios evaluated by VictoriaMetrics' vmalert (Debian's
`victoria-metrics` package): the same generated series, the same rule files,
replayed over stored history, for comparison with promtool's results
(test_detection.py, test_same_alerts_in_vmalert).

How: one victoria-metrics single node holds every scenario, one after another
on its time axis (series_gen times shifted to a recent day: the single node
does not answer queries about 1970, and values that are times move with them),
with a gap of GAP_S between scenarios so that no 15-minute window reaches the
previous one. `vmalert -replay.timeFrom/-replay.timeTo` then evaluates the
recording groups and then the alert groups over the whole span, one rule at a
time over the full range, and writes the recorded series and ALERTS back
through remote write; the firing ALERTS samples are read back per scenario.

Two things differ from Prometheus and are handled here, not in the rules:
- the import API has no staleness markers: a failed scrape is a missing
  sample (every rule input is read through last_over_time, which does not care);
- vmalert 1.79's replay cannot run the `query` template function, so the
  replayed copy of the rules has no annotations (promtool checks them).
A third is the replay's alone: each rule is one range query, in which
victoria-metrics 1.79's `q1 or on(...) q2` keeps q1's labels over the whole
range for a matched series, so a label that goes away (a host change cleared by
an accept) stays; detection_scenarios.Case.replay_drops names such labels.
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

import series_gen as sg

VICTORIA_METRICS = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"
VMALERT = shutil.which("vmalert") or "/usr/bin/vmalert"
GAP_S = 3 * 3600
EVAL_S = 60


def available() -> bool:
    return Path(VICTORIA_METRICS).exists() and Path(VMALERT).exists()


@dataclass
class Placed:
    name: str
    scenario: sg.Scenario
    series: list[sg.SeriesData]
    start: int  # unix time of the scenario's t = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, data: bytes | None = None, timeout: float = 120) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=timeout) as r:
        return r.read()


def import_lines(p: Placed) -> list[str]:
    """/api/v1/import JSON lines of one scenario's series."""
    out = []
    for s in p.series:
        shift = p.start if s.labels["__name__"].endswith("_timestamp_seconds") else 0
        ts, vs = [], []
        for i, tok in enumerate(s.tokens):
            if tok is None or tok == "stale":
                continue
            ts.append((p.start + i * sg.STEP_S) * 1000)
            vs.append(tok + shift)
        if ts:
            out.append(json.dumps({"metric": s.labels, "values": vs, "timestamps": ts}))
    return out


def replay_levels(rules_dir: Path, workdir: Path) -> list[Path]:
    """Copies of the rule files without annotations, split by dependency
    level: level 0 reads only scraped series, level n reads what levels below
    n record. vmalert replays rule by rule and reads recorded series back from
    the single node, so each level is replayed (and its results flushed and
    made searchable) before the next one starts; within a level no rule waits
    for another."""
    rules = []  # (level, file, group, rule)
    for name in ("recording.yaml", "alerts.yaml"):
        doc = yaml.safe_load((rules_dir / name).read_text(encoding="utf-8"))
        for group in doc["groups"]:
            for rule in group["rules"]:
                rule.pop("annotations", None)
                rules.append([0, name, group, rule])
    recorded = {r["record"] for _, _, _, r in rules if "record" in r}
    level_of: dict[str, int] = {}
    for _ in range(len(rules)):  # a chain is at most as long as the rules
        for entry in rules:
            deps = [level_of.get(m, 0) + 1 for m in recorded if m in re.findall(r"[\w:]+", entry[3]["expr"])]
            entry[0] = max(deps, default=0)
            if "record" in entry[3]:
                level_of[entry[3]["record"]] = entry[0]
    out = []
    for level in sorted({entry[0] for entry in rules}):
        groups: dict[tuple[str, str], dict] = {}
        for lv, name, group, rule in rules:
            if lv == level:
                key = (name, group["name"])
                groups.setdefault(key, {**{k: v for k, v in group.items() if k != "rules"}, "rules": []})
                groups[key]["rules"].append(rule)
        path = workdir / f"replay-level{level}.yaml"
        path.write_text(yaml.safe_dump({"groups": list(groups.values())}, sort_keys=False))
        out.append(path)
    return out


def run(scenarios: dict[str, tuple[sg.Scenario, list[sg.SeriesData]]], rules_dir: Path) -> dict:
    """Replays every scenario; returns name -> {label tuple: (first, last, count)}
    of the firing ALERTS samples in scenario time, and the wall time taken."""
    t0 = time.monotonic()
    day = 86400
    # A recent midnight with room for every scenario before now.
    total = sum(s.duration_s + GAP_S for s, _ in scenarios.values())
    start = (int(time.time()) - total - 2 * day) // day * day
    placed = []
    for name, (scn, series) in scenarios.items():
        placed.append(Placed(name, scn, series, start))
        start += (scn.duration_s + GAP_S) // 3600 * 3600 + 3600
    with tempfile.TemporaryDirectory(prefix="numaprobe-vmalert-") as tmp:
        work = Path(tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        vm_log = (work / "vm.log").open("w")
        args = [VICTORIA_METRICS, f"-storageDataPath={work / 'data'}", "-retentionPeriod=100y",
                f"-httpListenAddr=127.0.0.1:{port}", "-search.disableCache", "-search.latencyOffset=0s"]
        vm = subprocess.Popen(args, stdout=vm_log, stderr=subprocess.STDOUT)
        try:
            wait_ready(url, vm, work / "vm.log")
            for p in placed:
                http(f"{url}/api/v1/import", "\n".join(import_lines(p)).encode())
            http(f"{url}/internal/force_flush")
            t_from = placed[0].start
            t_to = placed[-1].start + placed[-1].scenario.duration_s
            fmt = "%Y-%m-%dT%H:%M:%SZ"
            for level in replay_levels(rules_dir, work):
                cmd = [VMALERT, f"-rule={level}", f"-datasource.url={url}", f"-remoteWrite.url={url}",
                       f"-evaluationInterval={EVAL_S}s", f"-datasource.queryStep={EVAL_S}s",
                       f"-replay.timeFrom={time.strftime(fmt, time.gmtime(t_from))}",
                       f"-replay.timeTo={time.strftime(fmt, time.gmtime(t_to))}",
                       "-replay.disableProgressBar", "-replay.maxDatapointsPerQuery=10000",
                       "-replay.rulesDelay=0s", "-disableAlertgroupLabel",
                       f"-httpListenAddr=127.0.0.1:{free_port()}"]
                # vmalert flushes its remote write queue before it exits.
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
                if res.returncode != 0:
                    raise RuntimeError(f"vmalert replay of {level.name} failed ({res.returncode}):\n"
                                       f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
                # A restart: the single node then searches everything written
                # (1.79 left some freshly written series out of searches until then).
                vm.terminate()
                vm.wait(timeout=60)
                vm = subprocess.Popen(args, stdout=vm_log, stderr=subprocess.STDOUT)
                wait_ready(url, vm, work / "vm.log")
            fired = {p.name: firing(url, p) for p in placed}
        finally:
            vm.terminate()
            vm.wait(timeout=60)
            vm_log.close()
    return {"fired": fired, "seconds": time.monotonic() - t0}


def wait_ready(url: str, vm: subprocess.Popen, log: Path) -> None:
    for _ in range(200):
        if vm.poll() is not None:
            raise RuntimeError(f"victoria-metrics exited: {log.read_text()[-2000:]}")
        try:
            if http(f"{url}/health", timeout=2).strip() == b"OK":
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("victoria-metrics did not become ready in 20 s")


def firing(url: str, p: Placed) -> dict[tuple, tuple[float, float, int]]:
    """Firing ALERTS samples of one scenario's time span (scenario time)."""
    q = urllib.parse.urlencode({"match[]": 'ALERTS{alertstate="firing"}', "start": p.start,
                                "end": p.start + p.scenario.duration_s})
    out = {}
    for line in http(f"{url}/api/v1/export?{q}").decode().splitlines():
        row = json.loads(line)
        labels = {k: v for k, v in row["metric"].items() if k not in ("__name__", "alertstate")}
        times = sorted(t / 1000 - p.start for t in row["timestamps"])
        out[tuple(sorted(labels.items()))] = (times[0], times[-1], len(times))
    return out
