# SPDX-License-Identifier: Apache-2.0
"""The chart's README.md from its values.yaml: one table row per value, with
its default and the comment written above it in values.yaml, so the values
are documented where they are set and readable before the chart is generated
or installed (`helm show readme`, a chart repository's page). make-chart.py
writes it beside values.yaml; tests/deploy/test_helm.py checks that every value
has its row and its default.

The comment of a key is the block of `#` lines directly above it at the key's
indent; a nested key's name is its path (tls.enabled). A mapping's children
with a commented key get rows of their own; a list, a multi-line string or a
mapping without commented keys is one row whose default is shown as JSON.
"""
import json
import re

import yaml

KEY = re.compile(r"^( *)([A-Za-z][A-Za-z0-9_]*):(.*)$")
# A default longer than this is left to values.yaml (the configuration, the
# resources block): the table stays readable.
MAX_DEFAULT = 60


def comments(values_text):
    """path -> the comment above that key (joined lines), for every key."""
    found, block, parents = {}, [], []  # parents: (indent, name)
    scalar_indent = None  # inside a block scalar (`config: |`) opened at this indent
    for line in values_text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if scalar_indent is not None:
            if not line.strip() or indent > scalar_indent:
                continue
            scalar_indent = None
        stripped = line.strip()
        if stripped.startswith("#"):
            block.append(stripped.lstrip("#").strip())
            continue
        m = KEY.match(line)
        if m:
            while parents and parents[-1][0] >= indent:
                parents.pop()
            path = ".".join([name for _, name in parents] + [m.group(2)])
            found[path] = " ".join(block)
            parents.append((indent, m.group(2)))
            if m.group(3).strip().startswith(("|", ">")):
                scalar_indent = indent
        block = []
    return found


def shown(value):
    """A default as the table shows it."""
    if isinstance(value, str) and "\n" in value:
        return None
    text = json.dumps(value)
    return text if len(text) <= MAX_DEFAULT else None


SECTION = object()  # the default cell of a mapping whose values have rows of their own


def rows(values, described, prefix=""):
    """(path, default, description) for each value, in file order; the
    default is None when too long to show, SECTION for a mapping whose
    values follow."""
    for key, value in values.items():
        path = prefix + key
        children = isinstance(value, dict) and any(described.get(f"{path}.{k}") for k in value)
        if children:
            yield path, SECTION, described.get(path, "")
            yield from rows(value, described, path + ".")
        else:
            yield path, shown(value), described.get(path, "")


def readme(values_text, chart_name, version):
    values = yaml.safe_load(values_text)
    described = comments(values_text)
    lines = [
        f"# {chart_name} {version}",
        "",
        "numaprobe measures, on every Linux node, the memory latency and bandwidth its cores get from",
        "each NUMA node, and publishes them for Prometheus. This chart runs it as a DaemonSet, with",
        "its PodMonitor, alerting and recording rules and Grafana dashboards.",
        "",
        f"    helm install numaprobe {chart_name}-{version}.tgz -n monitoring --set image.repository=REGISTRY/numaprobe",
        "",
        "## Values",
        "",
        "Generated from values.yaml by deploy/helm/make-chart.py; a default shown as \"(values.yaml)\" is",
        "too long for the table.",
        "",
        "| Value | Default | Description |",
        "|---|---|---|",
    ]
    for path, default, text in rows(values, described):
        cell = "" if default is SECTION else f"`{default}`" if default is not None else "(values.yaml)"
        lines.append(f"| `{path}` | {cell.replace('|', '&#124;')} | {text.replace('|', '&#124;')} |")
    return "\n".join(lines) + "\n"
