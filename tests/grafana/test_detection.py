# SPDX-License-Identifier: Apache-2.0
"""Detection guarantees of grafana/rules (docs/detection.md), checked with
`promtool test rules` on realistic generated daemon series (series_gen.py):
every alert fires within its stated time in its scenario, and nothing else
fires, in particular nothing during seven healthy days.

The scenarios run once per session, two promtool processes at a time; the
time to fire of every expectation is printed in the terminal summary. Set
NUMAPROBE_RULES_DIR to run them against another copy of the rules.
"""
from __future__ import annotations

import pytest

import detection_scenarios as ds
import vmalert_replay as vr


@pytest.fixture(scope="session")
def outcomes(request, detection_report):
    """Runs the selected scenarios (all, or those `-k` leaves), two at a time."""
    names = [item.callspec.params["name"] for item in request.session.items
             if getattr(item, "callspec", None) and "name" in item.callspec.params]
    out = ds.run_all([n for n in ds.CASES if n in names])
    detection_report.extend(ds.table(out).splitlines())
    return out


def test_every_alert_is_covered():
    """Each alert has a scenario where it must fire; the quiet halves forbid all."""
    alert_names = {r["alert"] for g in ds.yaml.safe_load((ds.RULES_DIR / "alerts.yaml").read_text())["groups"]
                   for r in g["rules"] if "alert" in r}
    expected = {e.alert for make in ds.CASES.values() for e in make().expects}
    assert alert_names == expected, f"alerts without a firing scenario: {sorted(alert_names - expected)}"
    quiet = [n for n in ds.CASES if n.startswith("quiet_days")]
    assert len(quiet) == 2 and not any(ds.CASES[n]().expects for n in quiet)


@pytest.mark.parametrize("name", list(ds.CASES))
def test_scenario(outcomes, name):
    o = outcomes[name]
    if o.problems:
        pytest.fail(f"{name} ({o.case.what}):\n  " + "\n  ".join(o.problems), pytrace=False)



@pytest.fixture(scope="session")
def vmalert_fired(outcomes, detection_report):
    """Every selected scenario replayed by vmalert in one victoria-metrics."""
    if not vr.available():
        pytest.fail(f"{vr.VMALERT} or {vr.VICTORIA_METRICS} missing: .ci/install-deps installs victoria-metrics")
    out = vr.run({n: (o.case.scenario, o.series) for n, o in outcomes.items()}, ds.RULES_DIR)
    detection_report.append(f"vmalert replay of {len(outcomes)} scenarios: {out['seconds']:.1f} s")
    return out["fired"]


@pytest.mark.parametrize("name", list(ds.CASES))
def test_same_alerts_in_vmalert(outcomes, vmalert_fired, name):
    """vmalert fires the same alert series as promtool, each within one
    evaluation interval (docs/detection.md, "Loading the rules")."""
    problems = ds.compare_engines(outcomes[name], vmalert_fired[name], vr.EVAL_S)
    if problems:
        pytest.fail(f"{name}: vmalert and promtool differ:\n  " + "\n  ".join(problems), pytrace=False)
