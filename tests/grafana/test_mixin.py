# SPDX-License-Identifier: Apache-2.0
"""The mixin (grafana/mixin.libsonnet) is the source of grafana/rules/*.yaml and
grafana/dashboards/*.json: the committed files are exactly what it generates,
the source is jsonnetfmt-formatted, and _config overrides reach every rule and
panel query."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import yaml

import grafana_lib as g

GENERATE = g.GRAFANA_DIR / "generate.py"
PROMTOOL = g.PROMTOOL
JSONNETFMT = shutil.which("jsonnetfmt") or "/usr/bin/jsonnetfmt"
SOURCES = sorted(g.GRAFANA_DIR.rglob("*.libsonnet"))


def generate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GENERATE), *args], capture_output=True, text=True, timeout=300)


def test_committed_files_are_what_the_mixin_generates():
    res = generate("--check")
    assert res.returncode == 0, res.stderr


def test_check_notices_a_hand_edited_file(tmp_path):
    assert generate("--out", str(tmp_path)).returncode == 0
    assert generate("--check", "--out", str(tmp_path)).returncode == 0
    alerts = tmp_path / "rules" / "alerts.yaml"
    alerts.write_text(alerts.read_text(encoding="utf-8").replace("for: 5m", "for: 6m", 1), encoding="utf-8")
    res = generate("--check", "--out", str(tmp_path))
    assert res.returncode == 1 and "rules/alerts.yaml" in res.stderr, res.stderr


def test_sources_are_formatted():
    assert SOURCES, "no jsonnet sources under grafana/"
    res = subprocess.run([JSONNETFMT, "--test", *map(str, SOURCES)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"run jsonnetfmt -i on: {res.stdout}{res.stderr}"


# Every vector match and by-aggregation keeps the target's identity: with a
# cluster label configured, it must appear in each of them.
GROUPING = re.compile(r"\b(on|by)\s*\(([^)]*)\)")


def test_overrides_reach_every_rule(tmp_path):
    mixin = tmp_path / "override.jsonnet"
    mixin.write_text(
        "(import '%s') + { _config+:: { clusterLabel: 'cluster', selector: 'job=\"numa-x\"',"
        " latencyDriftThreshold: 0.07, driftFor: '7m' } }\n" % (g.GRAFANA_DIR / "mixin.libsonnet"),
        encoding="utf-8")
    res = generate("--mixin", str(mixin), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    files = [tmp_path / "rules" / "recording.yaml", tmp_path / "rules" / "alerts.yaml"]
    res = subprocess.run([PROMTOOL, "check", "rules", *map(str, files)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    groupings = 0
    for f in files:
        for grp in yaml.safe_load(f.read_text(encoding="utf-8"))["groups"]:
            for rule in grp["rules"]:
                for kind, labels in GROUPING.findall(rule["expr"]):
                    groupings += 1
                    assert "cluster" in [l.strip() for l in labels.split(",")], \
                        f"{rule.get('record') or rule.get('alert')}: {kind}({labels}) lacks the cluster label"
                if "up{" in rule["expr"]:
                    assert 'up{job="numa-x"}' in rule["expr"], rule["expr"]
    assert groupings > 10
    # The dashboards: the selector in every selector, the cluster label in
    # every grouping that keeps a target's identity.
    dashboards = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "dashboards").glob("*.json")]
    assert len(dashboards) == 2
    for dash in dashboards:
        exprs = [t["expr"] for _, t in g.iter_queries(dash)]
        exprs += [a["expr"] for a in dash["annotations"]["list"] if "expr" in a]
        for expr in exprs:
            for sel in g.selectors(expr):
                assert sel.has("job", "=", "numa-x"), f"{dash['uid']}: {sel} lacks the selector"
            for kind, labels in GROUPING.findall(expr):
                names = [l.strip() for l in labels.split(",")]
                if "job" in names or "instance" in names:
                    assert "cluster" in names, f"{dash['uid']}: {kind}({labels}) lacks the cluster label"
    alerts = {r["alert"]: r for grp in yaml.safe_load(files[1].read_text())["groups"] for r in grp["rules"]}
    drift = alerts["NumaProbeLatencyDrift"]
    assert drift["for"] == "7m" and "> 0.07" in drift["expr"] and "0.05" not in drift["expr"]
