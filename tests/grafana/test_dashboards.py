# SPDX-License-Identifier: Apache-2.0
"""Static checks of grafana/dashboards/*.json: identity, data source and
template variables, units, query selectors, the metric contract, that every
query parses (promtool), and what the peak drift panels show on series."""
from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

import grafana_lib as g

PROMTOOL = g.PROMTOOL
DASHBOARDS = g.load_dashboards()
IDS = [p.name for p in DASHBOARDS]
ALLOWED_UNITS = {"s", "Bps", "percentunit", "none", "short", "cps"}
# Static stand-ins for built-in Grafana variables.
BUILTINS = {"__rate_interval": "1m", "__interval": "1m", "__range": "1h", "__range_s": "3600"}


def recorded_names() -> set[str]:
    doc = yaml.safe_load(g.RECORDING_RULES.read_text(encoding="utf-8"))
    return {r["record"] for grp in doc["groups"] for r in grp["rules"]}


def static_values(dash: dict) -> dict[str, str]:
    """Substitution used to parse queries: All for multi-value variables."""
    values = dict(BUILTINS)
    for v in dash["templating"]["list"]:
        if v["type"] == "datasource":
            continue
        values[v["name"]] = (v.get("allValue") or ".+") if v.get("includeAll") else "host-a:10062"
    return values


def panels(dash):
    return list(g.iter_panels(dash["panels"]))


def test_dashboards_exist():
    assert {p.name for p in DASHBOARDS} == {"numaprobe-host.json", "numaprobe-fleet.json"}


def test_uids_unique_and_stable():
    uids = [d.get("uid") for d in DASHBOARDS.values()]
    assert all(uid and re.fullmatch(r"[a-z0-9-]{1,40}", uid) for uid in uids), uids
    assert len(set(uids)) == len(uids), f"duplicate dashboard uids: {uids}"
    titles = [d["title"] for d in DASHBOARDS.values()]
    assert len(set(titles)) == len(titles)
    for path, d in DASHBOARDS.items():
        assert d.get("id") is None, f"{path.name}: an instance-specific id breaks imports"
        assert path.stem == d["uid"], f"{path.name}: file name and uid differ"
        assert 36 <= d["schemaVersion"] <= 39, f"{path.name}: schemaVersion for Grafana 10"


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_panel_ids_unique(path):
    ids = [p.get("id") for p in panels(DASHBOARDS[path])]
    assert all(isinstance(i, int) for i in ids), "every panel needs an integer id"
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate panel ids {dup}"


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_every_panel_and_target_uses_the_datasource_variable(path):
    dash = DASHBOARDS[path]
    for p in panels(dash):
        assert p.get("datasource") == g.DATASOURCE_REF, f"panel {p.get('title')!r}: datasource"
        for t in p.get("targets", []):
            assert t.get("datasource") == g.DATASOURCE_REF, f"panel {p.get('title')!r} {t['refId']}: datasource"
    for v, _ in g.variable_queries(dash):
        assert v.get("datasource") == g.DATASOURCE_REF, f"variable {v['name']}: datasource"


def _datasource_uids(node):
    if isinstance(node, dict):
        ds = node.get("datasource")
        if isinstance(ds, dict):
            yield ds.get("uid")
        elif isinstance(ds, str):
            yield ds
        for v in node.values():
            yield from _datasource_uids(v)
    elif isinstance(node, list):
        for v in node:
            yield from _datasource_uids(v)


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_no_hard_coded_datasource(path):
    dash = DASHBOARDS[path]
    # The built-in annotation query uses Grafana's own pseudo data source.
    uids = set(_datasource_uids({k: v for k, v in dash.items() if k != "annotations"}))
    assert uids == {"${datasource}"}, f"hard-coded data sources: {uids - {'${datasource}'}}"
    assert not dash.get("__inputs"), "no import-time inputs: the datasource variable does the job"
    assert "${DS_" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_template_variables(path):
    dash = DASHBOARDS[path]
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    ds = variables["datasource"]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    job, instance = variables["job"], variables["instance"]
    for v in (job, instance):
        assert v["type"] == "query"
        query = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        selector, label = g.label_values_selector(query)
        assert label == v["name"] and "numaprobe_build_info" in selector
        assert v.get("refresh") == 2, f"{v['name']}: refresh on time range change"
    assert job["multi"] and job["includeAll"] and job["allValue"] == ".+"
    assert 'job=~"$job"' in instance["definition"], "instance values follow the selected jobs"
    if dash["uid"] == "numaprobe-fleet":
        assert instance["multi"] and instance["includeAll"] and instance["allValue"] == ".+"
    else:
        # The host dashboard shows one host's matrices: one instance at a time.
        assert not instance["multi"] and not instance["includeAll"]
    for v in variables.values():
        if v.get("includeAll"):
            assert v.get("allValue") == ".+", f"{v['name']}: allValue .+ (a regex matching any value)"


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_panels_titled_described_and_with_units(path):
    for p in panels(DASHBOARDS[path]):
        assert p.get("title"), f"panel {p.get('id')} has no title"
        if p["type"] == "row":
            continue
        assert p.get("description"), f"panel {p['title']!r}: description"
        assert p.get("targets"), f"panel {p['title']!r}: no queries"
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
        assert unit in ALLOWED_UNITS, f"panel {p['title']!r}: unit {unit!r} not in {sorted(ALLOWED_UNITS)}"
        title = p["title"].lower()
        if title.startswith("hosts ") and p["type"] == "stat":
            assert unit == "none", f"panel {p['title']!r}: a count of hosts has no unit"
        elif re.search(r"ratio|drift|deviat|spread|duty cycle|failure ratio", title):
            assert unit == "percentunit", f"panel {p['title']!r}: ratios and drift use percentunit"
        elif "bandwidth" in title:
            assert unit == "Bps", f"panel {p['title']!r}: bandwidth uses Bps"
        elif "latency" in title or "age" in title.split() or "oldest" in title:
            assert unit == "s", f"panel {p['title']!r}: times use s (base units)"


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_queries_filter_by_job_and_instance(path):
    """Every selector filters job=~"$job", and instance=~"$instance" where the
    series has an instance label (all but the per-cohort recording rules)."""
    dash = DASHBOARDS[path]
    for p, t in g.iter_queries(dash):
        for sel in g.selectors(t["expr"]):
            where = f"panel {p['title']!r} {t['refId']}: {sel}"
            assert sel.name, where
            assert sel.has("job", "=~", "$job"), f"{where} lacks job=~\"$job\""
            level = sel.name.split(":")[0] if ":" in sel.name else "instance"
            if "instance" in level:
                assert sel.has("instance", "=~", "$instance"), f"{where} lacks instance=~\"$instance\""


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_queries_use_only_contract_or_recorded_metrics(path):
    known = g.contract_metrics() | recorded_names() | g.PROMETHEUS_SERIES
    dash = DASHBOARDS[path]
    exprs = [(f"panel {p['title']!r} {t['refId']}", t["expr"]) for p, t in g.iter_queries(dash)]
    exprs += [(f"variable {v['name']}", g.label_values_selector(q)[0]) for v, q in g.variable_queries(dash)]
    for where, expr in exprs:
        unknown = g.metric_names(expr) - known
        assert not unknown, f"{where}: {sorted(unknown)} are neither in contract_metrics.txt nor recorded"
        for sel in g.selectors(expr):
            if sel.name.endswith("_total"):
                assert sel.ranged, f"{where}: counter {sel.name} outside rate()/increase()"


def test_all_queries_parse():
    """promtool parses every query: each becomes a recording rule in a temp file."""
    rules = []
    for path, dash in DASHBOARDS.items():
        values = static_values(dash)
        for p, t in g.iter_queries(dash):
            rules.append({"record": f"dashboard:check_{len(rules)}:expr", "expr": g.substitute(t["expr"], values),
                          "labels": {"panel": f"{dash['uid']}/{p['title']}/{t['refId']}"}})
        for v, q in g.variable_queries(dash):
            selector, _ = g.label_values_selector(q)
            rules.append({"record": f"dashboard:check_{len(rules)}:expr", "expr": g.substitute(selector, values)})
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "dashboard-queries.yaml"
        f.write_text(yaml.safe_dump({"groups": [{"name": "dashboard-queries", "rules": rules}]}))
        res = subprocess.run([PROMTOOL, "check", "rules", str(f)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("path", DASHBOARDS, ids=IDS)
def test_matrix_panels(path):
    """Matrices are tables of an instant query in table format, pivoted by
    groupingToMatrix. Cells are coloured only at thresholds (the alert levels);
    absolute figures are plain, since colouring them by size shows the topology."""
    matrices = []
    for p in panels(DASHBOARDS[path]):
        for tr in p.get("transformations", []):
            if tr["id"] == "groupingToMatrix":
                assert p["type"] == "table"
                assert all(t["instant"] and t["format"] == "table" for t in p["targets"]), p["title"]
                assert tr["options"]["valueField"] == "Value"
                defaults = p["fieldConfig"]["defaults"]
                cell = defaults["custom"]["cellOptions"]["type"]
                if "thresholds" in defaults:
                    assert cell == "color-background", f"{p['title']}: cells coloured at the thresholds"
                else:
                    assert cell == "auto", f"{p['title']}: absolute figures are not colour-scaled"
                matrices.append((tr["options"]["rowField"], tr["options"]["columnField"], p))
    if DASHBOARDS[path]["uid"] == "numaprobe-host":
        pairs = [p for r, c, p in matrices if (r, c) == ("cpu_node", "mem_node")]
        coloured = {p["title"] for p in pairs if "thresholds" in p["fieldConfig"]["defaults"]}
        assert len(pairs) - len(coloured) == 8, \
            "plain latency, bandwidth, peak bandwidth (read, write) and interleave weight (4 sources) matrices"
        weights = {p["title"] for p in pairs if p["title"].startswith("Interleave weights: ")}
        assert weights == {f"Interleave weights: {s}" for s in ("measured", "measured_nearest", "kernel", "firmware")}
        assert not weights & coloured, "weights are absolute figures, not coloured"
        assert len(coloured) == 5, \
            "latency drift, bandwidth drift, peer and peak bandwidth drift (read, write) matrices at the alert levels"
        assert ("cpu_a", "cpu_b") in [(r, c) for r, c, _ in matrices], "core-to-core matrix"
        bw = [p for p in pairs if "bandwidth" in p["title"].lower() and "peak" not in p["title"].lower()]
        assert len(bw) == 2 and all(p.get("repeat") == "op" for p in bw), "bandwidth matrices repeated per op"
        # The peak kind's two ops are fixed: one panel each, no variable
        # (it would be empty on hosts without probes.peak_bandwidth).
        peak = [p for p in pairs if "peak" in p["title"].lower()]
        assert sorted(p["title"].rsplit(": ", 1)[1] for p in peak) == ["read", "read", "write", "write"], \
            "peak bandwidth and its drift, one matrix per op"
        assert not any(p.get("repeat") for p in peak)
        assert all(f'op="{p["title"].rsplit(": ", 1)[1]}"' in p["targets"][0]["expr"] for p in peak)


# The peak bandwidth drift panels on series: (cpu_node, mem_node, op) ->
# (recent median, baseline), labelled as docs/metrics.md lists them. Each ratio
# is exact in binary, so each drift is an exact number.
PEAK_RECENT_MEDIAN = "numaprobe_memory_peak_bandwidth_recent_median_bytes_per_second"
PEAK_BASELINE = "numaprobe_memory_peak_bandwidth_baseline_bytes_per_second"
PEAK_SERIES = {("0", "0", "read"): (1.75e11, 2e11), ("0", "1", "read"): (7.5e10, 8e10),
               ("0", "0", "write"): (1.5e11, 1.2e11), ("1", "0", "write"): (6e10, 6.4e10)}


def peak_drift_tests(exprs: list[tuple[str, str]], op_of) -> dict:
    """A promtool rules test: each (panel title, query) must show, per pair of
    its op (op_of(title): one op, or None for all), recent median / baseline - 1
    of PEAK_SERIES on host-a, and nothing of host-b, whose baselines are the
    same but whose recent medians are half as high."""
    series = []
    for instance, scale in (("host-a:10062", 1), ("host-b:10062", 0.5)):
        for (cpu_node, mem_node, op), (recent, baseline) in PEAK_SERIES.items():
            labels = f'job="numaprobe",instance="{instance}",cpu_node="{cpu_node}",mem_node="{mem_node}",op="{op}"'
            series += [{"series": f"{PEAK_RECENT_MEDIAN}{{{labels}}}", "values": f"{recent * scale:g}+0x10"},
                       {"series": f"{PEAK_BASELINE}{{{labels}}}", "values": f"{baseline:g}+0x10"}]
    checks = []
    for title, expr in exprs:
        expected = [{"labels": f'{{job="numaprobe",instance="host-a:10062",cpu_node="{c}",mem_node="{m}",op="{o}"}}',
                     "value": recent / baseline - 1}
                    for (c, m, o), (recent, baseline) in PEAK_SERIES.items() if op_of(title) in (None, o)]
        checks.append({"expr": expr, "eval_time": "5m", "exp_samples": expected})
    return {"rule_files": [], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": checks}]}


def run_rules_test(doc: dict) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "peak-drift-test.yaml"
        f.write_text(yaml.safe_dump(doc, sort_keys=False))
        return subprocess.run([PROMTOOL, "test", "rules", str(f)], capture_output=True, text=True, timeout=120)


def test_peak_drift_panels_on_series():
    """The host dashboard's panels that read the peak recent median (its
    drift matrices, one per op, and its drift per pair) show recent median /
    baseline - 1 per pair of the host: promtool evaluates each query on
    series. test_dashboards_live.py evaluates them on the real daemon with its
    figure for the recent median, which needs 5 figures a minute apart."""
    host = next(d for d in DASHBOARDS.values() if d["uid"] == "numaprobe-host")
    values = static_values(host)
    exprs = [(p["title"], g.substitute(t["expr"], values)) for p, t in g.iter_queries(host)
             if PEAK_RECENT_MEDIAN in g.metric_names(t["expr"])]
    assert sorted(title for title, _ in exprs) == [
        "Peak bandwidth drift from baseline per pair", "Peak bandwidth drift: recent median / baseline: read",
        "Peak bandwidth drift: recent median / baseline: write"], exprs

    def op_of(title):
        return title.rsplit(": ", 1)[1] if title.startswith("Peak bandwidth drift: ") else None

    res = run_rules_test(peak_drift_tests(exprs, op_of))
    assert res.returncode == 0, res.stdout + res.stderr
    # The check notices a query that divides the other way.
    title, expr = exprs[0]
    inverted = expr.replace(PEAK_RECENT_MEDIAN, "RECENT").replace(PEAK_BASELINE, PEAK_RECENT_MEDIAN) \
        .replace("RECENT", PEAK_BASELINE)
    assert run_rules_test(peak_drift_tests([(title, inverted)], op_of)).returncode != 0


def test_fleet_failure_ratio_matches_the_alert():
    """The fleet's failure table counts the same results as NumaProbeProbesFailing
    (whose run rates are recorded: the result matchers are in the recording
    rules): the same failed results over the same runs made (skipped runs,
    which the idle gate did not let start, are neither)."""
    alerts = yaml.safe_load(g.ALERTING_RULES.read_text(encoding="utf-8"))
    expr = next(r["expr"] for grp in alerts["groups"] for r in grp["rules"] if r.get("alert") == "NumaProbeProbesFailing")
    recording = yaml.safe_load(g.RECORDING_RULES.read_text(encoding="utf-8"))
    recorded = {r["record"]: r["expr"] for grp in recording["groups"] for r in grp["rules"]}
    exprs = [expr] + [recorded[sel.name] for sel in g.selectors(expr) if sel.name in recorded]

    def result_matchers(text):
        return {(o, v) for sel in g.selectors(text) for l, o, v in sel.matchers if l == "result"}

    alert_results = set().union(*map(result_matchers, exprs))
    fleet = next(d for d in DASHBOARDS.values() if d["uid"] == "numaprobe-fleet")
    panel = next(p for p in panels(fleet) if p["title"] == "Probe failure ratio by host (last hour)")
    panel_results = result_matchers(panel["targets"][0]["expr"])
    assert panel_results == alert_results
    failed = [v for o, v in alert_results if o == "!~"]
    assert len(failed) == 1 and "skipped" in failed[0].split("|"), "skipped runs are no failures"
    assert ("!=", "skipped") in alert_results, "nor runs: the share is of the runs made"


def test_staleness_leaves_out_the_peak_probe():
    """What judges an age against the host's refresh interval (NumaProbeProbeStale,
    the stale panels) reads only the probes of the rounds: peak_bandwidth runs
    hours apart by design (its own panels show its age and skipped runs)."""
    ages = {"numaprobe_probe_oldest_success_timestamp_seconds", "numaprobe_probe_last_success_timestamp_seconds"}
    alerts = yaml.safe_load(g.ALERTING_RULES.read_text(encoding="utf-8"))
    exprs = [("NumaProbeProbeStale", r["expr"]) for grp in alerts["groups"] for r in grp["rules"]
             if r.get("alert") == "NumaProbeProbeStale"]
    for d in DASHBOARDS.values():
        for p in panels(d):
            for t in p.get("targets", []):
                if "refresh_interval_seconds" in t["expr"] and ages & g.metric_names(t["expr"]):
                    exprs.append((f"{d['uid']} / {p['title']}", t["expr"]))
    assert len(exprs) >= 5, exprs
    for where, expr in exprs:
        for sel in g.selectors(expr):
            if sel.name in ages:
                assert sel.has("probe", "!=", "peak_bandwidth"), f"{where}: {sel} judges peak_bandwidth by rounds"


def test_multinode_list_names_existing_panels():
    existing = {(d["uid"], p["title"]) for d in DASHBOARDS.values() for p in panels(d)}
    listed = g.multinode_panels()
    assert listed, "multinode_panels.txt is empty"
    assert not listed - existing, f"multinode_panels.txt names missing panels: {sorted(listed - existing)}"
    for d in DASHBOARDS.values():
        for p in panels(d):
            if (d["uid"], p["title"]) in listed:
                assert "NUMA nodes" in p["description"], f"{p['title']}: say in the description it needs 2+ nodes"


def test_quiet_list_names_existing_panels():
    existing = {(d["uid"], p["title"]): p for d in DASHBOARDS.values() for p in panels(d)}
    listed = g.quiet_panels()
    assert listed, "quiet_panels.txt is empty"
    assert not listed - set(existing), f"quiet_panels.txt names missing panels: {sorted(listed - set(existing))}"
    for key in listed:
        assert "empty when" in existing[key]["description"].lower(), f"{key[1]}: say in the description when it is empty"


# The quantity each alert compares, as a panel shows it (recent median /
# baseline - 1, drop below baseline, deviation from peers, age in refresh
# intervals, duty cycle / budget), is coloured or marked at the alert's level.
def runbook_alerts(panel: dict) -> list[str]:
    return [l["title"].removeprefix("Runbook: ") for l in panel.get("links", []) if l["title"].startswith("Runbook: ")]


def constants(expr: str) -> set[float]:
    found = re.findall(r"(?:[<>]=?|==)\s*(-?[0-9]+(?:\.[0-9]+)?)|\b([0-9]+(?:\.[0-9]+)?)\s*\*", expr)
    return {abs(float(a or b)) for a, b in found}


def alert_levels() -> dict[str, set[float]]:
    """Every constant an alert compares with (`> 0.05`, `< -0.08`, `1.25 *`),
    its own and those of the recorded series it reads (an alert over a
    recording of the offending series only has its level there)."""
    recorded = {r["record"]: r["expr"] for grp in yaml.safe_load(g.RECORDING_RULES.read_text(encoding="utf-8"))["groups"]
                for r in grp["rules"]}
    doc = yaml.safe_load(g.ALERTING_RULES.read_text(encoding="utf-8"))
    out = {}
    for grp in doc["groups"]:
        for r in grp["rules"]:
            read = [e for name, e in recorded.items() if re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", r["expr"])]
            out[r["alert"]] = set().union(constants(r["expr"]), *map(constants, read))
    return out


def panel_levels(panel: dict) -> set[float]:
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    steps = defaults.get("thresholds", {}).get("steps", [])
    levels = {abs(s["value"]) for s in steps if s.get("value") is not None}
    for t in panel.get("targets", []):  # a level drawn as a line: `1.25 * budget`
        levels |= {float(x) for x in re.findall(r"^([0-9]+(?:\.[0-9]+)?) \*", t["expr"])}
    return levels


def check_levels(panel: dict, levels: dict[str, set[float]]) -> list[str]:
    errors = []
    for alert in runbook_alerts(panel):
        shown = panel_levels(panel)
        if not shown or not shown <= levels[alert]:
            errors.append(f"{panel['title']!r}: levels {sorted(shown)} are not {alert}'s {sorted(levels[alert])}")
    return errors


def test_dashboard_colours_are_the_alert_levels():
    levels = alert_levels()
    linked = set()
    errors = []
    for d in DASHBOARDS.values():
        for p in panels(d):
            linked |= set(runbook_alerts(p))
            errors += check_levels(p, levels)
    assert not errors, "\n".join(errors)
    expected = {"NumaProbeLatencyDrift", "NumaProbeBandwidthDrop", "NumaProbePeakBandwidthDrop",
                "NumaProbeRemoteLocalRatioOutlier", "NumaProbeProbeStale", "NumaProbeProbesFailing",
                "NumaProbeDutyCycleOverBudget"}
    assert expected <= linked, f"no panel shows the level of {sorted(expected - linked)}"
    # The check itself notices a panel coloured at another level.
    host = next(d for d in DASHBOARDS.values() if d["uid"] == "numaprobe-host")
    drift = next(p for p in panels(host) if "NumaProbeLatencyDrift" in runbook_alerts(p))
    wrong = json.loads(json.dumps(drift))
    wrong["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"] = 0.10
    assert check_levels(wrong, levels)


def test_runbook_names_existing_panels():
    """docs/runbook.md names panels as **numaprobe / Host › title**; each one
    exists, and every alert's section names at least one."""
    titles = {(d["title"], p["title"]) for d in DASHBOARDS.values() for p in panels(d)}
    text = g.RUNBOOK.read_text(encoding="utf-8")
    named = re.findall(r"\*\*(numaprobe / (?:Host|Fleet)) ›\s+([^*]+?)\*\*", text)
    assert named, "docs/runbook.md names no panel"
    missing = sorted({(d, " ".join(t.split())) for d, t in named} - titles)
    assert not missing, f"docs/runbook.md names panels that do not exist: {missing}"
    alerts = yaml.safe_load(g.ALERTING_RULES.read_text(encoding="utf-8"))
    for name in (r["alert"] for grp in alerts["groups"] for r in grp["rules"]):
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        assert "**Dashboards.** **numaprobe / " in section, f"runbook section {name} names no panel"
