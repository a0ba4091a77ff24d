# SPDX-License-Identifier: Apache-2.0
"""The HELP texts the daemon serves against what they mean (ctest `docs`).

tests/daemon/metrics_reference_test.cc holds docs/metrics.md's "meaning" cell
to each family's HELP word for word: a copy, so a HELP that leaves something
out passes. Here the HELP text a running `numaprobe serve` exposes (every
probe enabled, scraped before its first round: every family but the probe
lock holder's) is read against what states the meaning independently of it,
and no HELP text is written into this test:

- the family's name (Prometheus naming): a _seconds family speaks of time, a
  _timestamp_seconds one of when, a _bytes_per_second one of bandwidth, a
  _ratio one of a ratio, share or budget, an _info one says it is 1, a _total
  one is a counter; a HELP defined as another family's (Baseline of X, Median
  of X) takes X's unit;
- docs/metrics.md's labels cell: the HELP explains each label the row lists
  (by its name, or through the family it is defined by), except `cpu`, which
  the row marks per-CPU mode only, and the gaps listed in UNEXPLAINED;
- the code's value sets: a HELP of a family with a `result` label names every
  result kernels/result.cc defines, one with a `probe` label that names probe
  kinds names every kind of docs/numaprobe.reference.yaml's probes;
- what a HELP cites exists: numaprobe_* families in docs/metrics.md, dotted
  configuration keys in docs/numaprobe.reference.yaml.

ctest sets NUMAPROBE_BIN and NUMAPROBE_SOURCE_DIR.
"""
import functools
import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest
import yaml

from deploy_env import numaprobe_bin, reference_keys

ROOT = pathlib.Path(os.environ.get("NUMAPROBE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))

# HELP texts that do not yet name a label their row lists (none now): the
# daemon's HELP (daemon/, C++) is to say what each is. A fixed one must leave
# this list.
UNEXPLAINED: dict[str, set[str]] = {}

UNITS = [  # name suffix, what its HELP must speak of
    ("_timestamp_seconds", r"\b(when|time|moment|since|last|started|began)\b"),
    ("_seconds_total", r"\b(time|seconds?|waited|spent)\b"),
    ("_bytes_per_second", r"\b(bandwidth|bytes)\b"),
    ("_seconds", r"\b(latency|time|seconds?|duration|age|interval|took|transfer)\b"),
    ("_bytes", r"\b(bytes?|memory|size|buffer)\b"),
    ("_ratio", r"\b(ratio|share|over|divided|fraction|budget|spread)\b"),
    ("_info", r"\balways 1\b"),
]

CONFIG = """\
probes:
  loaded_latency: {{enabled: true}}
  peak_bandwidth: {{enabled: true}}
  interleave_bandwidth: {{enabled: true}}
schedule: {{interval: 1h}}
state_directory: {state}
probe_lock_file: ""
"""


@pytest.fixture(scope="module")
def exposition(tmp_path_factory):
    """{family: (type, HELP)} from a running daemon's /metrics."""
    tmp = tmp_path_factory.mktemp("meaning")
    state = tmp / "state"
    state.mkdir(mode=0o700)
    (tmp / "numaprobe.yaml").write_text(CONFIG.format(state=state))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([numaprobe_bin(), "serve", f"--config.file={tmp / 'numaprobe.yaml'}",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline, text = time.monotonic() + 60, ""
        while "# HELP numaprobe_build_info" not in text:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "no /metrics within 60 s"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode()
            except OSError:
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    helps = dict(re.findall(r"^# HELP (\S+) (.*)$", text, re.M))
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    return {f: (types.get(f), h) for f, h in helps.items()}


@functools.cache
def doc_rows():
    """{family: labels of its docs/metrics.md row}."""
    rows = {}
    for line in (ROOT / "docs" / "metrics.md").read_text().splitlines():
        m = re.match(r"^\| `((?:numaprobe|process)_\w+)` \|", line)
        if m:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[m.group(1)] = set(re.findall(r"`(\w+)`", cells[2]))
    return rows


@functools.cache
def config_keys():
    return reference_keys(ROOT)


@functools.cache
def results():
    body = (ROOT / "kernels" / "result.cc").read_text().split("OutcomeName(Outcome outcome)", 1)[1]
    return set(re.findall(r'return "([a-z_]+)";', body.split("\n}\n", 1)[0])) - {"unknown"}


@functools.cache
def probe_kinds():
    return set(yaml.safe_load((ROOT / "docs" / "numaprobe.reference.yaml").read_text())["probes"])


def cited(help_text):
    return [f for f in re.findall(r"\b(numaprobe_\w+)", help_text) if f in doc_rows()]


def meaning_problems(exposition):
    problems = []
    for family, (kind, text) in sorted(exposition.items()):
        if not family.startswith("numaprobe_"):
            continue
        # The name's unit, or that of the family the HELP defines it by.
        for suffix, words in UNITS:
            if family.endswith(suffix):
                if not re.search(words, text, re.I) and not any(f.endswith(suffix) for f in cited(text)):
                    problems.append(f"{family}: its HELP does not say what its unit ({suffix}) measures: {text}")
                break
        if family.endswith("_total") and kind != "counter":
            problems.append(f"{family}: a _total family is a counter, not a {kind}")
        # The labels its docs/metrics.md row lists.
        labels = doc_rows().get(family, set()) - {"cpu"}
        spoken = text.lower().replace("_", " ")
        inherited = set().union(*(doc_rows()[f] for f in cited(text))) if cited(text) else set()
        missing = {l for l in labels if not re.search(r"\b%s\b" % l.replace("_", " "), spoken) and l not in inherited}
        known = UNEXPLAINED.get(family, set())
        if missing - known:
            problems.append(f"{family}: its HELP does not say what the label(s) {sorted(missing - known)} of its "
                            f"docs/metrics.md row are: {text}")
        if known - missing:
            problems.append(f"{family}: its HELP explains {sorted(known - missing)} now: take them out of "
                            "UNEXPLAINED in tests/deploy/test_metrics_meaning.py")
        # The code's value sets.
        if "result" in labels and not results() <= set(re.findall(r"[a-z_]+", text)):
            problems.append(f"{family}: its HELP does not name the results {sorted(results() - set(re.findall(r'[a-z_]+', text)))} "
                            "(kernels/result.cc)")
        named = probe_kinds() & set(re.findall(r"[a-z_]+", text))
        if "probe" in labels and len(named) >= 3 and named != probe_kinds():
            problems.append(f"{family}: its HELP lists the probes without {sorted(probe_kinds() - named)}")
        # What it cites exists.
        for name in re.findall(r"\b(numaprobe_[a-z_]+[a-z])\b", text):
            if name not in doc_rows() and name != "numaprobe_version":  # a host change's field
                problems.append(f"{family}: its HELP names {name}, no family of docs/metrics.md")
        sections = {k for k in config_keys() if "." not in k}
        for key in re.findall(r"(?<![\w.])((?:%s)\.[a-z_][\w.]*[a-z_])" % "|".join(sections), text):
            if key not in config_keys():
                problems.append(f"{family}: its HELP names {key}, no key of docs/numaprobe.reference.yaml")
    return problems


def test_help_texts_say_what_the_family_means(exposition):
    documented = set(doc_rows()) - {"numaprobe_probe_lock_holder_info"}  # only while a probe waits for the lock
    missing = documented - set(exposition)
    assert not missing, f"families of docs/metrics.md the daemon did not expose: {sorted(missing)}"
    problems = meaning_problems(exposition)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("family,edit", [
    ("numaprobe_probe_runs_total", lambda t: t.replace("skipped", "not run")),
    ("numaprobe_duty_cycle_budget_ratio", lambda t: "The probe CPU budget in force."),  # passes: see below
    ("numaprobe_memory_latency_seconds", lambda t: "Median memory figure of the pair."),
    ("numaprobe_memory_bandwidth_bytes_per_second", lambda t: t.replace("by op", "by operation")),
    ("numaprobe_build_info", lambda t: t.replace("; always 1", "")),
    ("numaprobe_baseline_series", lambda t: t + " See numaprobe_baseline_gone."),
    ("numaprobe_host_info", lambda t: t.replace("CPU nodes per package", "nodes")),
    ("numaprobe_probe_runs_total", lambda t: t.replace("core_to_core, ", "")),
    ("numaprobe_probe_runs_total", lambda t: t + " See probes.latency.no_such_key."),
])
def test_an_incomplete_help_fails(exposition, family, edit):
    """Each rule fails on a HELP with a part taken out. (A budget HELP that
    drops what the budget is while learning still passes: no independent
    statement says it, so that stays for review.)"""
    changed = dict(exposition)
    kind, text = changed[family]
    changed[family] = (kind, edit(text))
    assert meaning_problems(exposition) == []
    problems = meaning_problems(changed)
    if family == "numaprobe_duty_cycle_budget_ratio":
        assert not problems
    else:
        assert problems and all(p.startswith(family) for p in problems), problems
