# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the grafana/ tests: locating files, walking dashboard
panels, a small PromQL scanner (metric selectors and their label matchers) and
Grafana-style template variable substitution.

The scanner is deliberately small: it understands what our dashboards and rules
use (selectors, functions, aggregations with by/without, vector matching with
on/ignoring/group_left/group_right, ranges, strings, numbers). promtool parses
every query for real (test_dashboards.py feeds them to `promtool check rules`),
so the scanner only has to find selectors, not validate syntax.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Iterator

TESTS_DIR = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("NUMAPROBE_SOURCE_DIR", TESTS_DIR.parent.parent)).resolve()
GRAFANA_DIR = SOURCE_DIR / "grafana"
DASHBOARD_DIR = GRAFANA_DIR / "dashboards"
RULES_DIR = GRAFANA_DIR / "rules"
RECORDING_RULES = RULES_DIR / "recording.yaml"
ALERTING_RULES = RULES_DIR / "alerts.yaml"
RUNBOOK = SOURCE_DIR / "docs" / "runbook.md"
RULES_TEST = TESTS_DIR / "rules_test.yaml"
CONTRACT_FILE = TESTS_DIR / "contract_metrics.txt"
MULTINODE_FILE = TESTS_DIR / "multinode_panels.txt"
QUIET_FILE = TESTS_DIR / "quiet_panels.txt"



def _promtool() -> str:
    """The promtool the rule tests and scenarios run: Debian's (2.42) unless
    NUMAPROBE_PROMTOOL names another. "prometheus3" is the pinned Prometheus 3
    one that .ci/install-deps builds into its tools directory (the
    grafana_*_prom3 ctest entries set it)."""
    chosen = os.environ.get("NUMAPROBE_PROMTOOL", "")
    if chosen == "prometheus3":
        tools = os.environ.get("NUMAPROBE_TOOLS_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                     "numaprobe-tools")
        return os.path.join(tools, "prometheus3", "promtool")
    return chosen or shutil.which("promtool") or "/usr/bin/promtool"


PROMTOOL = _promtool()

# Series Prometheus itself makes (up per target, ALERTS from the alerting
# rules); not part of the daemon's exposition.
PROMETHEUS_SERIES = {"up", "ALERTS"}

DATASOURCE_REF = {"type": "prometheus", "uid": "${datasource}"}


@cache
def mixin_config() -> dict:
    """The mixin's _config (grafana/config.libsonnet) with its defaults."""
    res = subprocess.run(["jsonnet", "-e", "(import '%s')._config" % (GRAFANA_DIR / "config.libsonnet")],
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(res.stdout)


def render_rules_test(dest_dir: Path) -> Path:
    """rules_test.yaml as promtool runs it: ${RUNBOOK_URL:<anchor>} and
    ${GRAFANA_URL} filled in from _config, rule files by absolute path."""
    cfg = mixin_config()
    text = RULES_TEST.read_text(encoding="utf-8")
    text = re.sub(r"\$\{RUNBOOK_URL:([a-z]+)\}", lambda m: cfg["runbookURLPattern"].replace("%s", m.group(1)), text)
    text = text.replace("${GRAFANA_URL}", cfg["grafanaURL"])
    assert "${" not in text, "rules_test.yaml: unknown ${...} placeholder"
    for rel in ("../../grafana/rules/recording.yaml", "../../grafana/rules/alerts.yaml"):
        text = text.replace(rel, str((RULES_TEST.parent / rel).resolve()))
    dest = dest_dir / RULES_TEST.name
    dest.write_text(text, encoding="utf-8")
    return dest


def read_list(path: Path) -> list[str]:
    """Non-empty lines of a list file, without `#` comments."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def contract_metrics() -> set[str]:
    return set(read_list(CONTRACT_FILE))


def multinode_panels(path: Path = MULTINODE_FILE) -> set[tuple[str, str]]:
    """(dashboard uid, panel title) pairs from multinode_panels.txt (`uid | title`)."""
    out = set()
    for line in read_list(path):
        uid, _, title = line.partition("|")
        out.add((uid.strip(), title.strip()))
    return out


def quiet_panels() -> set[tuple[str, str]]:
    """(dashboard uid, panel title) pairs from quiet_panels.txt: empty when all is well."""
    return multinode_panels(QUIET_FILE)


def dashboard_files() -> list[Path]:
    return sorted(DASHBOARD_DIR.glob("*.json"))


def load_dashboards() -> dict[Path, dict]:
    return {p: json.loads(p.read_text(encoding="utf-8")) for p in dashboard_files()}


def iter_panels(panels: list[dict]) -> Iterator[dict]:
    """Every panel, rows included, descending into collapsed rows' `panels`."""
    for p in panels:
        yield p
        yield from iter_panels(p.get("panels", []))


def iter_queries(dashboard: dict) -> Iterator[tuple[dict, dict]]:
    """(panel, target) for every target of every non-row panel."""
    for panel in iter_panels(dashboard.get("panels", [])):
        for t in panel.get("targets", []):
            yield panel, t


def variable_queries(dashboard: dict) -> Iterator[tuple[dict, str]]:
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            yield v, q["query"] if isinstance(q, dict) else q


# --------------------------------------------------------------------- PromQL

_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+(\.\d*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")
_LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"} | _LABEL_LIST_KEYWORDS
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile"}


class Selector:
    def __init__(self, name: str | None, matchers: list[tuple[str, str, str]], ranged: bool = False):
        self.name = name
        self.matchers = matchers  # (label, op, value)
        self.ranged = ranged  # followed by a [range]

    def has(self, label: str, op: str, value: str) -> bool:
        return (label, op, value) in self.matchers

    def __repr__(self) -> str:
        inner = ",".join(f'{l}{o}"{v}"' for l, o, v in self.matchers)
        return f"{self.name or ''}{{{inner}}}"


def _skip_string(s: str, i: int) -> int:
    quote = s[i]
    i += 1
    while i < len(s):
        if s[i] == "\\" and quote != "`":
            i += 2
            continue
        if s[i] == quote:
            return i + 1
        i += 1
    raise ValueError(f"unterminated string in {s!r}")


def _read_string(s: str, i: int) -> tuple[str, int]:
    end = _skip_string(s, i)
    raw = s[i + 1:end - 1]
    if s[i] != "`":
        raw = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), raw)
    return raw, end


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def _skip_balanced(s: str, i: int, open_c: str, close_c: str) -> int:
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "\"'`":
            i = _skip_string(s, i)
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced {open_c}{close_c} in {s!r}")


def _parse_matchers(s: str, i: int) -> tuple[list[tuple[str, str, str]], int]:
    assert s[i] == "{"
    i += 1
    out = []
    while True:
        i = _skip_ws(s, i)
        if s[i] == "}":
            return out, i + 1
        m = _IDENT.match(s, i)
        if not m:
            raise ValueError(f"bad label matcher at {s[i:]!r}")
        label = m.group(0)
        i = _skip_ws(s, m.end())
        op = next(o for o in ("=~", "!~", "!=", "=") if s.startswith(o, i))
        i = _skip_ws(s, i + len(op))
        value, i = _read_string(s, i)
        out.append((label, op, value))
        i = _skip_ws(s, i)
        if s[i] == ",":
            i += 1


def selectors(expr: str) -> list[Selector]:
    """The vector selectors of a PromQL expression, in order."""
    out: list[Selector] = []
    s = expr
    i = 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c in "\"'`":
            i = _skip_string(s, i)
        elif c == "[":
            i = _skip_balanced(s, i, "[", "]")
        elif c == "{":
            matchers, i = _parse_matchers(s, i)
            name = next((v for l, o, v in matchers if l == "__name__" and o == "="), None)
            j = _skip_ws(s, i)
            out.append(Selector(name, matchers, j < len(s) and s[j] == "["))
        elif c == "$":  # a Grafana variable outside a string, e.g. topk($n, ...)
            m = re.compile(r"\$\{?\w+(:\w+)?\}?").match(s, i)
            i = m.end() if m else i + 1
        elif c.isdigit() or (c == "." and i + 1 < len(s) and s[i + 1].isdigit()):
            m = _NUMBER.match(s, i)
            i = m.end()
            m2 = re.compile(r"[smhdwy]+").match(s, i)  # a duration after offset
            if m2:
                i = m2.end()
        elif _IDENT.match(s, i):
            m = _IDENT.match(s, i)
            word = m.group(0)
            i = m.end()
            j = _skip_ws(s, i)
            low = word.lower()
            if low in _LABEL_LIST_KEYWORDS:
                if j < len(s) and s[j] == "(":
                    i = _skip_balanced(s, j, "(", ")")
            elif low in _KEYWORDS or word in AGGREGATIONS:
                pass
            elif j < len(s) and s[j] == "(":
                pass  # a function call
            else:
                matchers = []
                if j < len(s) and s[j] == "{":
                    matchers, i = _parse_matchers(s, j)
                    j = _skip_ws(s, i)
                out.append(Selector(word, matchers, j < len(s) and s[j] == "["))
        else:
            i += 1
    return out


def metric_names(expr: str) -> set[str]:
    return {sel.name for sel in selectors(expr) if sel.name}


def calls(expr: str) -> set[str]:
    """The functions and aggregation operators a PromQL expression calls
    (`rate(`, `quantile without(cpu) (`): identifiers followed by `(` once
    strings, ranges, label matchers and label lists are taken out."""
    out, s, i, plain = set(), expr, 0, []
    while i < len(s):
        c = s[i]
        if c in "\"'`":
            i = _skip_string(s, i)
            plain.append(" ")
        elif c == "[":
            i = _skip_balanced(s, i, "[", "]")
            plain.append(" ")
        elif c == "{":
            i = _skip_balanced(s, i, "{", "}")
            plain.append(" ")
        else:
            plain.append(c)
            i += 1
    text = "".join(plain)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    for m in re.finditer(r"(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*)\s*\(", text):
        if m.group(1).lower() not in _KEYWORDS:
            out.add(m.group(1))
    return out


def label_values_selector(query: str) -> tuple[str, str]:
    """(selector, label) of a `label_values(selector, label)` variable query."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query, re.S)
    if not m:
        raise ValueError(f"not a label_values(selector, label) query: {query!r}")
    return m.group(1).strip(), m.group(2)


# ------------------------------------------------------------------ Grafana

def grafana_regex_escape(value: str) -> str:
    """What Grafana's Prometheus data source does to one value of a multi-value
    or include-All variable: regex-escape it and double the backslashes for the
    PromQL string literal (public/app/plugins/datasource/prometheus,
    prometheusSpecialRegexEscape)."""
    value = value.replace("\\", "\\\\\\\\")
    return re.sub(r"([$^*{}\[\]'+?.()|])", r"\\\\\1", value)


def format_variable(variable: dict, values: list[str]) -> str:
    """The text Grafana substitutes for a query variable with these values selected."""
    if variable.get("multi") or variable.get("includeAll"):
        escaped = [grafana_regex_escape(v) for v in values]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    # prometheusRegularEscape: double backslashes, escape single quotes.
    return values[0].replace("\\", "\\\\").replace("'", "\\\\'")


def panel_copies(panel: dict, selected: dict[str, tuple[dict, list[str]]]) -> list[dict[str, str]]:
    """The substitutions of each copy Grafana draws of `panel`: one per value
    of its repeat variable (`selected`: name -> (variable, values selected)),
    or the panel itself."""
    repeat = panel.get("repeat")
    if not repeat:
        return [{}]
    variable, values = selected[repeat]
    return [{repeat: format_variable(variable, [value])} for value in values]


def substitute(text: str, values: dict[str, str]) -> str:
    """Replace $name, ${name} and ${name:format}-less references."""
    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(f"no value for variable ${name} in {text!r}")
        return values[name]
    # Longest names first is implied by \w+ being greedy.
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", repl, text)


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading text."""
    slug = heading.strip().lower()
    slug = re.sub(r"[^\w\- ]", "", slug)
    return slug.replace(" ", "-")


def runbook_anchors() -> set[str]:
    anchors = set()
    for line in RUNBOOK.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            anchors.add(github_anchor(m.group(1)))
    return anchors
