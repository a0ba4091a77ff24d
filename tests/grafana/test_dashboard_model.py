# SPDX-License-Identifier: Apache-2.0
"""grafana/dashboards/*.json against Grafana's own dashboard model, offline
(ctest label `grafana`): the TypeScript types of @grafana/schema (npm, pinned
in .ci/install-deps) checked with `tsc --noEmit`. Each dashboard becomes
`export const d = <json> satisfies DashboardJson;`, where DashboardJson is the
model's Dashboard with every enum widened to its literal values (JSON spells
"thresholds", not FieldColorModeId.Thresholds). Object literals get
TypeScript's excess-property check, so a field the model does not know is an
error, and so is a wrong type or a missing required field.

ALLOW_LIST holds what Grafana itself writes into dashboards (export, save)
but its published model lacks or spells differently; it is applied before
the check, and every entry must still be needed. A mutated dashboard (a
misspelt field, a wrong type) must fail.

$NUMAPROBE_TOOLS_DIR (default ~/.cache/numaprobe-tools) holds npm/ with
node_modules (typescript, @grafana/schema).
"""
import copy
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "deploy"))
from deploy_env import require, tools_dir, unavailable  # noqa: E402

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DASHBOARDS = sorted((ROOT / "grafana" / "dashboards").glob("*.json"))

MODEL_TS = """\
import type { Dashboard } from '@grafana/schema';
// Dashboard JSON spells enum members by value ("thresholds", 0): widen every
// enum of the model to its literal values; keep everything else as it is.
type Json<T> =
  T extends string ? `${T}` :
  T extends number ? (`${T}` extends `${infer N extends number}` ? N : never) :
  T extends boolean | null | undefined ? T :
  T extends ReadonlyArray<infer E> ? Array<Json<E>> :
  T extends object ? { [K in keyof T]: Json<T[K]> } :
  T;
export type DashboardJson = Json<Dashboard>;
"""


def _drop_top(keys):
    def apply(d):
        return [k for k in keys if d.pop(k, None) is not None]
    return apply


def _links_tooltip(d):
    fixed = []
    for link in d.get("links", []):
        if "tooltip" not in link:
            link["tooltip"] = ""
            fixed.append(link.get("title"))
    return fixed


def _variables(predicate, action):
    def apply(d):
        hits = []
        for var in d.get("templating", {}).get("list", []):
            if predicate(var):
                action(var)
                hits.append(var.get("name"))
        return hits
    return apply


# Query options of Prometheus annotations: the Prometheus data source reads
# them from the annotation itself (and moves expr/step into `target` on load),
# while the model types an annotation's target as a bare DataQuery.
PROMETHEUS_ANNOTATION_KEYS = ["expr", "step", "titleFormat", "textFormat", "tagKeys", "useValueForTime"]


def _prometheus_annotations(d):
    hits = []
    for a in d.get("annotations", {}).get("list", []):
        if (a.get("datasource") or {}).get("type") != "prometheus":
            continue
        if [k for k in PROMETHEUS_ANNOTATION_KEYS if a.pop(k, None) is not None]:
            hits.append(a.get("name"))
    return hits


# (what, why, apply(dashboard) -> list of places it changed)
ALLOW_LIST = [
    ("__inputs, __requires, __elements",
     "written by Grafana's 'Export for sharing externally'; import reads them; not part of the model",
     _drop_top(["__inputs", "__requires", "__elements"])),
    ("style",
     "written by Grafana up to 10 ('dark'); dropped from the model, ignored on load",
     _drop_top(["style"])),
    ("links[].tooltip missing",
     "the model requires it; Grafana's link editor omits it when empty",
     _links_tooltip),
    ("templating.list[].current = {}",
     "written for variables whose options are resolved at load time; the model wants text/value",
     _variables(lambda v: v.get("current") == {}, lambda v: v.pop("current"))),
    ("annotations.list[] Prometheus query options (expr, step, titleFormat, textFormat, tagKeys, useValueForTime)",
     "data-source-specific fields of a Prometheus annotation, read by Grafana's Prometheus data source; "
     "the model has no type for them",
     _prometheus_annotations),
    ("templating.list[].definition",
     "query variables' human-readable query, written by the variable editor; not in the model",
     _variables(lambda v: "definition" in v, lambda v: v.pop("definition"))),
]


def normalise(dashboard):
    """The dashboard with ALLOW_LIST applied, and which entries applied."""
    d = copy.deepcopy(dashboard)
    used = {what: apply(d) for what, _why, apply in ALLOW_LIST}
    return d, used


@pytest.fixture(scope="module")
def tsc():
    require("node")
    npm = pathlib.Path(tools_dir()) / "npm"
    tsc = npm / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or not (npm / "node_modules" / "@grafana" / "schema").is_dir():
        unavailable(f"{npm}/node_modules lacks typescript or @grafana/schema: .ci/install-deps installs them")
    return tsc


def typecheck(tsc, dashboards, workdir):
    """tsc over one file per dashboard; (exit code, output)."""
    workdir.mkdir(parents=True, exist_ok=True)
    node_modules = workdir / "node_modules"
    if not node_modules.exists():
        node_modules.symlink_to(tsc.parents[1])
    (workdir / "model.ts").write_text(MODEL_TS)
    files = ["model.ts"]
    for name, dashboard in dashboards.items():
        (workdir / f"{name}.ts").write_text(
            "import type { DashboardJson } from './model.js';\n"
            f"export const dashboard = {json.dumps(dashboard, indent=1)} satisfies DashboardJson;\n")
        files.append(f"{name}.ts")
    (workdir / "tsconfig.json").write_text(json.dumps({
        "compilerOptions": {"strict": True, "noEmit": True, "module": "node16", "moduleResolution": "node16",
                            "target": "es2022", "skipLibCheck": True, "types": []},
        "files": files}))
    p = subprocess.run([str(tsc), "-p", str(workdir / "tsconfig.json")], capture_output=True, text=True,
                       timeout=300, cwd=workdir)
    return p.returncode, p.stdout + p.stderr


def test_dashboards_satisfy_grafanas_model(tsc, tmp_path):
    assert DASHBOARDS
    dashboards, used = {}, {what: [] for what, _, _ in ALLOW_LIST}
    for path in DASHBOARDS:
        d, applied = normalise(json.loads(path.read_text()))
        dashboards[path.stem.replace("-", "_")] = d
        for what, hits in applied.items():
            used[what] += hits
    rc, out = typecheck(tsc, dashboards, tmp_path / "ts")
    assert rc == 0, f"tsc found the dashboards at odds with @grafana/schema's Dashboard:\n{out[-6000:]}"
    unused = [what for what, hits in used.items() if not hits]
    assert not unused, f"allow-list entries no dashboard needs any more (remove them): {unused}"


def _first_panel(d):
    return next(p for p in d["panels"] if p.get("type") != "row")


MUTATIONS = {
    "misspelt-top-level-field": (lambda d: d.__setitem__("titel", d.pop("title")), "titel"),
    "misspelt-panel-field": (lambda d: _first_panel(d).__setitem__("gridPoss", _first_panel(d).pop("gridPos")),
                             "gridPoss"),
    "wrong-type-in-panel": (lambda d: _first_panel(d)["gridPos"].__setitem__("h", "8"), "not assignable"),
    "misspelt-variable-field": (lambda d: d["templating"]["list"][0].__setitem__("hidee", 0), "hidee"),
    "bad-enum-value": (lambda d: d.__setitem__("graphTooltip", 7), "Type '7' is not assignable"),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_a_mutated_dashboard_fails(case, tsc, tmp_path):
    mutate, needle = MUTATIONS[case]
    d, _ = normalise(json.loads(DASHBOARDS[0].read_text()))
    mutate(d)
    rc, out = typecheck(tsc, {"mutated": d}, tmp_path / "ts")
    assert rc != 0, f"{case}: tsc accepted the mutated dashboard"
    assert needle in out, out[-3000:]
