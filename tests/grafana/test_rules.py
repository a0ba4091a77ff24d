# SPDX-License-Identifier: Apache-2.0
"""Static checks of grafana/rules/*.yaml: promtool check/test, alert metadata,
runbook anchors, and that rules_test.yaml covers every alert both ways."""
from __future__ import annotations

import re
import subprocess
from urllib.parse import urlparse

import pytest
import yaml

import grafana_lib as g

PROMTOOL = g.PROMTOOL
SEVERITIES = {"critical", "warning", "info"}


def load_rules(path) -> list[dict]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [dict(rule, _group=group["name"]) for group in doc["groups"] for rule in group["rules"]]


def alerts() -> list[dict]:
    return [r for r in load_rules(g.ALERTING_RULES) if "alert" in r]


def recorded_names() -> set[str]:
    return {r["record"] for r in load_rules(g.RECORDING_RULES) if "record" in r}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, cwd=g.SOURCE_DIR, timeout=300)


def test_promtool_check_rules():
    res = run(PROMTOOL, "check", "rules", "--lint-fatal", str(g.RECORDING_RULES), str(g.ALERTING_RULES))
    assert res.returncode == 0, res.stdout + res.stderr


def test_promtool_test_rules(tmp_path):
    res = run(PROMTOOL, "test", "rules", str(g.render_rules_test(tmp_path)))
    assert res.returncode == 0, res.stdout + res.stderr


def test_rule_names_follow_conventions():
    for rule in load_rules(g.RECORDING_RULES):
        parts = rule["record"].split(":")
        assert len(parts) == 3 and all(parts), f"{rule['record']}: not level:metric:operations"
        assert parts[1].startswith("numaprobe_"), rule["record"]
    names = [a["alert"] for a in alerts()]
    assert names, "no alerts"
    # One alert may be written more than once (the peer alert, once per hold),
    # but each rule of it needs a label set of its own.
    keys = [(a["alert"], tuple(sorted(a.get("labels", {}).items()))) for a in alerts()]
    assert len(keys) == len(set(keys)), "duplicate alert rules (same name and labels)"
    for name in names:
        assert re.fullmatch(r"NumaProbe(?:[A-Z][a-z0-9]*)+", name), f"{name}: not CamelCase NumaProbe…"


@pytest.mark.parametrize("alert", alerts(), ids=lambda a: a["alert"])
def test_alert_metadata(alert):
    labels = alert.get("labels", {})
    ann = alert.get("annotations", {})
    assert labels.get("severity") in SEVERITIES, f"severity must be one of {SEVERITIES}"
    summary = ann.get("summary", "")
    assert summary.endswith("."), "summary must be a sentence ending with a period"
    assert "{{" not in summary, "summary must be static; templating belongs in description"
    assert "{{" in ann.get("description", ""), "description must be templated ($labels / $value)"
    assert alert.get("for"), "every alert needs a for: duration so one noisy sample cannot fire it"
    cfg = g.mixin_config()
    url = ann.get("runbook_url", "")
    assert cfg["runbookURLPattern"].endswith("docs/runbook.md#%s")
    assert url == cfg["runbookURLPattern"] % alert["alert"].lower(), \
        f"runbook_url must point at the alert's section of docs/runbook.md: {url}"
    anchor = urlparse(url).fragment
    assert anchor in g.runbook_anchors(), f"docs/runbook.md has no heading for #{anchor}"
    dashboard = ann.get("dashboard_url", "")
    assert dashboard in (cfg["hostDashboardURL"], cfg["fleetDashboardURL"]), f"dashboard_url: {dashboard}"


def test_rules_use_only_contract_and_recorded_metrics():
    known = g.contract_metrics() | recorded_names() | g.PROMETHEUS_SERIES
    for rule in load_rules(g.RECORDING_RULES) + load_rules(g.ALERTING_RULES):
        unknown = g.metric_names(rule["expr"]) - known
        assert not unknown, f"{rule.get('record') or rule.get('alert')}: unknown metrics {sorted(unknown)}"
    # Recording rules read only what is recorded before them (in the same group)
    # or in an earlier group, so one evaluation sees fresh inputs.
    seen: set[str] = set()
    for rule in load_rules(g.RECORDING_RULES):
        used = {n for n in g.metric_names(rule["expr"]) if ":" in n}
        assert used <= seen, f"{rule['record']} reads {sorted(used - seen)} before it is recorded"
        seen.add(rule["record"])


def test_every_alert_fires_and_stays_quiet_in_rules_test():
    doc = yaml.safe_load(g.RULES_TEST.read_text(encoding="utf-8"))
    rule_files = {(g.RULES_TEST.parent / f).resolve() for f in doc["rule_files"]}
    assert rule_files == {g.RECORDING_RULES.resolve(), g.ALERTING_RULES.resolve()}
    # A quiet case is a test whose input never fires the alert (an empty
    # exp_alerts while a firing test is still pending does not count).
    firing: set[str] = set()
    quiet: set[str] = set()
    for test in doc["tests"]:
        fired_here, empty_here = set(), set()
        for case in test.get("alert_rule_test", []):
            name = case["alertname"]
            if case.get("exp_alerts"):
                fired_here.add(name)
                for exp in case["exp_alerts"]:
                    assert exp.get("exp_labels", {}).get("severity"), f"{name}: check the severity label"
                    ann = exp.get("exp_annotations", {})
                    assert {"summary", "description", "runbook_url", "dashboard_url"} <= set(ann), \
                        f"{name}: a firing case must check summary, description and both links"
            else:
                empty_here.add(name)
        firing |= fired_here
        quiet |= empty_here - fired_here
    names = {a["alert"] for a in alerts()}
    assert not names - set(firing), f"alerts without a firing test: {sorted(names - set(firing))}"
    assert not names - set(quiet), f"alerts without a quiet test: {sorted(names - set(quiet))}"
    stray = (set(firing) | set(quiet)) - names
    assert not stray, f"rules_test.yaml tests alerts that do not exist: {sorted(stray)}"
