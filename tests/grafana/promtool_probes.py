# SPDX-License-Identifier: Apache-2.0
"""Reading alert firing times out of `promtool test rules`.

promtool 2.42 reports a promql_expr_test only when it fails, and then prints
what the expression returned. The probes below expect nothing, so promtool
prints every alert series they find: the first and last firing time and the
number of firing evaluations per window (an expression over
ALERTS{alertstate="firing"}), and the extremes of the detection ratios in the
quiet scenarios. An alert_rule_test expecting no alert prints the labels and
annotations of the firing alerts the same way. parse_report() turns that
report back into values; anything else in it is a real failure.
"""
from __future__ import annotations

import json
import re

from grafana_lib import PROMTOOL  # noqa: F401 (the scenarios import it from here)
CHUNK_S = 7200  # probe window: 120 evaluations x series stays under promtool's 10 000 samples


def windows(duration_s: int) -> list[tuple[int, str]]:
    """(end, range) of consecutive windows of at most CHUNK_S up to the end.
    Prometheus 2 range selectors include their start, so each range is one
    second short of the distance to the previous end: nothing counts twice."""
    ends = list(range(CHUNK_S, duration_s, CHUNK_S)) + [duration_s]
    return [(end, f"{end - prev - 1}s" if prev else f"{end}s") for prev, end in zip([0] + ends, ends)]


def probes(duration_s: int) -> list[dict]:
    """First and last firing time and number of firing evaluations of every
    alert series, per window."""
    out = []
    for end, w in windows(duration_s):
        for expr in (f'min_over_time(timestamp(ALERTS{{alertstate="firing"}})[{w}:1m])',
                     f'max_over_time(timestamp(ALERTS{{alertstate="firing"}})[{w}:1m])',
                     f'count_over_time(ALERTS{{alertstate="firing"}}[{w}])'):
            out.append({"expr": expr, "eval_time": f"{end}s", "exp_samples": []})
    return out


# How close healthy series came to the thresholds (quiet scenarios): the
# extreme of each ratio an alert compares, per window.
MARGINS = {
    "latency recent median / baseline, max": (
        "max", "max(max_over_time(numaprobe_memory_latency_worst_pair_drift_ratio[{w}]))"),
    "bandwidth recent median / baseline, min": (
        "min", "min(min_over_time(numaprobe_memory_bandwidth_worst_pair_drift_ratio[{w}]))"),
    "peak bandwidth recent median / baseline, min": (
        "min", "min(min_over_time(numaprobe_memory_peak_bandwidth_worst_pair_drift_ratio[{w}]))"),
    "remote/local vs peers, max |x - 1|": (
        "max", "max(max_over_time(instance:numaprobe_memory_latency_recent_remote_local_ratio:peer_deviation_max[{w}:2m]))"),
}


def margin_probes(duration_s: int) -> dict[str, tuple[str, str]]:
    """expr -> (margin name, max|min)."""
    return {tmpl.format(w=w): (name, agg) for end, w in windows(duration_s) for name, (agg, tmpl) in MARGINS.items()}


_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_labels(s: str, i: int) -> tuple[dict[str, str], int]:
    assert s[i] == "{", s[i:i + 40]
    i += 1
    out = {}
    while s[i] != "}":
        m = _LABEL.match(s, i)
        if not m:
            raise ValueError(f"cannot parse labels at {s[i:i + 60]!r}")
        out[m.group(1)] = json.loads(f'"{m.group(2)}"')
        i = m.end()
    return out, i + 1


def parse_samples(s: str) -> list[tuple[dict[str, str], float]]:
    out, i = [], 0
    s = s.strip()
    if s == "nil":
        return out
    while i < len(s):
        labels, i = parse_labels(s, i)
        m = re.compile(r"\s+(\S+?)(,\s*|$)").match(s, i)
        out.append((labels, float(m.group(1))))
        i = m.end()
    return out


def parse_report(text: str, probe_exprs: set[str]):
    """Probe results and annotation probes from promtool's failure report."""
    results: dict[tuple[str, int], list] = {}
    alerts: dict[str, list[dict]] = {}
    other: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'\s+expr: (".*"), time: (\S+?),\s*(err: .*)?$', line)
        if m:
            expr = json.loads(m.group(1))
            if expr not in probe_exprs or m.group(3):
                other.append(line)
                i += 1
                continue
            got = next(l for l in lines[i + 1:i + 3] if l.strip().startswith("got:"))
            results[(expr, m.group(2))] = parse_samples(got.strip()[len("got:"):])
            i += 3
            continue
        m = re.match(r"\s+alertname: (\w+), time: (\S+?),\s*$", line)
        if m:
            j, labels = i + 1, {}
            while j < len(lines) and not re.match(r"\s+(expr|alertname|name): ", lines[j]):
                lm = re.match(r"\s+(Labels|Annotations):(\{.*\}),?\s*$", lines[j])
                if lm and lm.group(1) == "Labels":
                    labels = parse_labels(lm.group(2), 0)[0]
                elif lm:
                    alerts.setdefault(m.group(1), []).append((labels, parse_labels(lm.group(2), 0)[0]))
                j += 1
            i = j
            continue
        # The file name line (2.x "Unit Testing: F", 3.x "Processing test
        # file: F") and the verdicts are not problems.
        if line.strip() and not line.startswith(("Unit Testing:", "Processing test file:", "  FAILED:", "  SUCCESS")) \
                and not re.match(r"\s+name: .*,$", line):
            other.append(line)
        i += 1
    return results, alerts, other
