# SPDX-License-Identifier: Apache-2.0
"""The rule files stay portable: every PromQL function they call, every rule
and group field and every annotation template function is one that Prometheus
2.x and 3.x, Thanos Ruler, the Mimir ruler and VictoriaMetrics' vmalert all
evaluate the same way without feature flags (docs/detection.md, "Loading the
rules"). A rule that reaches for anything else fails here by name."""
from __future__ import annotations

import re

import pytest
import yaml

import grafana_lib as g

# PromQL functions stable in Prometheus 2.x and 3.x (so also in Thanos Ruler
# and the Mimir ruler, which embed Prometheus' engine) and known to MetricsQL.
# Left out on purpose: holt_winters (removed in 3.0), the experimental
# functions behind --enable-feature=promql-experimental-functions
# (mad_over_time, sort_by_label, sort_by_label_desc, limitk, limit_ratio,
# double_exponential_smoothing, info, ts_of_*), and the native-histogram
# functions (histogram_count, histogram_sum, histogram_fraction,
# histogram_avg, histogram_stddev, histogram_stdvar: experimental in 2.x).
STABLE_FUNCTIONS = {
    "abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
    "count_over_time", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp",
    "floor", "histogram_quantile", "hour", "idelta", "increase", "irate", "label_join", "label_replace",
    "last_over_time", "ln", "log10", "log2", "max_over_time", "min_over_time", "minute", "month",
    "predict_linear", "present_over_time", "quantile_over_time", "rate", "resets", "round", "scalar", "sgn",
    "sort", "sort_desc", "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time", "time", "timestamp",
    "vector", "year",
}
STABLE_AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                       "bottomk", "topk", "quantile"}
# Group fields every engine reads. Not: limit (Prometheus 2.31+ only, ignored
# by vmalert's replay), query_offset (3.x), partial_response_strategy (Thanos),
# source_tenants / evaluation_delay (Mimir), vmalert's type/eval_offset/...
GROUP_FIELDS = {"name", "interval", "rules"}
# Rule fields. Not: keep_firing_for (Prometheus 2.42+, unknown to vmalert 1.79).
RULE_FIELDS = {"record", "alert", "expr", "for", "labels", "annotations"}
# Template functions that Prometheus' and vmalert's template engines both define
# (prometheus/template/template.go, VictoriaMetrics app/vmalert/templates),
# plus Go's text/template built-ins the rules use.
TEMPLATE_FUNCTIONS = {"query", "first", "value", "label", "sortByLabel", "humanize", "humanizeDuration",
                      "humanizePercentage", "humanizeTimestamp", "title", "toUpper", "toLower", "match",
                      "reReplaceAll", "stripPort", "printf", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
                      "not", "len", "index", "urlquery"}
TEMPLATE_KEYWORDS = {"if", "else", "end", "with", "range", "define", "template", "block"}


def rule_docs():
    return [(p.name, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in (g.RECORDING_RULES, g.ALERTING_RULES)]


def rules():
    return [(name, group["name"], rule) for name, doc in rule_docs() for group in doc["groups"]
            for rule in group["rules"]]


def template_calls(text: str) -> set[str]:
    """Function names in the {{ }} actions of a Go template: bare identifiers
    that are not fields ($x.y, .y), keywords, strings or numbers."""
    out = set()
    for action in re.findall(r"\{\{-?(.*?)-?\}\}", text, re.S):
        action = re.sub(r'"(?:[^"\\]|\\.)*"|`[^`]*`', " ", action)
        for m in re.finditer(r"(?<![\w.$])([A-Za-z_]\w*)", action):
            if m.group(1) not in TEMPLATE_KEYWORDS:
                out.add(m.group(1))
    return out


def test_scanner_finds_what_is_not_portable():
    """The checks below can fail: the scanners see what they must refuse."""
    assert g.calls('sort_by_label(mad_over_time(x{a="b("}[5m]), "a") and on(a) holt_winters(y[1h], 0.5, 0.5)') \
        == {"sort_by_label", "mad_over_time", "holt_winters"}
    assert g.calls("quantile without(cpu) (0.5, last_over_time(x[15m])) / on(a) group_left(b) count by (a) (y)") \
        == {"quantile", "last_over_time", "count"}
    assert template_calls('{{ with query "x" | first }}{{ . | value | humanize }}{{ $labels.a | toUpper }}{{ end }}') \
        == {"query", "first", "value", "humanize", "toUpper"}
    assert not {"mad_over_time", "sort_by_label", "holt_winters", "limitk", "info"} & STABLE_FUNCTIONS


@pytest.mark.parametrize("file,group,rule", rules(), ids=lambda x: x.get("record") or x.get("alert")
                         if isinstance(x, dict) else None)
def test_rule_is_portable(file, group, rule):
    called = g.calls(rule["expr"])
    unknown = called - STABLE_FUNCTIONS - STABLE_AGGREGATIONS
    assert not unknown, f"{file} {group}: functions outside the stable set: {sorted(unknown)}"
    assert "@" not in re.sub(r'"(?:[^"\\]|\\.)*"', "", rule["expr"]), "the @ modifier pins a rule to a time"
    assert set(rule) <= RULE_FIELDS, f"fields not every engine knows: {sorted(set(rule) - RULE_FIELDS)}"
    for key, text in rule.get("annotations", {}).items():
        unknown = template_calls(text) - TEMPLATE_FUNCTIONS
        assert not unknown, f"annotation {key}: template functions not in every engine: {sorted(unknown)}"


def test_groups_use_portable_fields():
    for name, doc in rule_docs():
        assert set(doc) == {"groups"}, f"{name}: top-level keys {sorted(doc)}"
        for group in doc["groups"]:
            extra = set(group) - GROUP_FIELDS
            assert not extra, f"{name} group {group['name']}: fields not every engine knows: {sorted(extra)}"


def test_function_list(capsys):
    """Prints the functions the rules use (the list docs/detection.md gives)."""
    used = set().union(*(g.calls(r["expr"]) for _, _, r in rules()))
    assert used <= STABLE_FUNCTIONS | STABLE_AGGREGATIONS
    with capsys.disabled():
        print(f"\nPromQL the rules use: {', '.join(sorted(used))}")
