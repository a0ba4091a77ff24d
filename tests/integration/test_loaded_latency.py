# SPDX-License-Identifier: Apache-2.0
"""`numaprobe probe --tests loaded_latency`: the loaded-latency curve as a
person asks for it, in a table, in JSON and as an SVG plot. Real binary on
this machine (one NUMA node, two CPUs: one chase CPU, one load CPU).
Structure and placement are asserted, never timings."""
import json
import os
import xml.etree.ElementTree as ET

import pytest

SMALL = ["--latency-buffer", "64MiB", "--bandwidth-buffer", "64MiB", "--delays", "0,6400",
         "--samples", "3", "--lock-file", ""]
SVG = "{http://www.w3.org/2000/svg}"
# Sanitizer builds run the threads several times slower: a point may then
# miss its deadline, or the load threads their answer deadline.
SANITIZED = os.environ.get("NUMAPROBE_SANITIZED") == "1"


def busy_evidence(rec_or_point, discards):
    """A disturbed result is only acceptable with evidence the machine was
    busy: samples discarded for switches/migrations/late answers, or a point
    that ran out of its deadline (under a sanitizer)."""
    return sum(discards.values()) > 0 or (SANITIZED and "deadline" in rec_or_point["reason"])


def needs_two_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("loaded latency needs a chase CPU and a load CPU")


def test_not_run_by_default(run):
    r = run("probe", "--format", "json", "--tests", "latency", "--latency-buffer", "64MiB", "--loads", "2000",
            "--samples", "3", "--lock-file", "")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["loaded_latency"] == []
    assert "=latency,bandwidth,core_to_core" in run("probe", "--help").stdout, "--tests shows its default"


def test_curve_in_json_table_and_svg(run, tmp_path):
    needs_two_cpus()
    plot = tmp_path / "curve.svg"
    r = run("probe", "--tests", "loaded_latency", "--format", "json", "--traffic", "read,read2-ntwrite1",
            "--plot", str(plot), *SMALL)
    out = json.loads(r.stdout)
    records = out["loaded_latency"]
    pairs = out["topology"]["plan"]["memory_pairs"]
    assert len(records) == 2 * len(pairs), records  # one per pair and traffic mix
    assert {rec["traffic"] for rec in records} == {"read", "read2-ntwrite1"}
    busy = False
    for rec in records:
        if rec["outcome"] != "ok":
            assert rec["outcome"] in (("disturbed", "timeout") if SANITIZED else ("disturbed",)), rec
            assert busy_evidence(rec, rec["discards"]) or rec["outcome"] == "timeout", \
                f"disturbed without evidence of a busy machine: {rec}"
            busy = True
        assert rec["load_cpus"] and rec["cpu"] not in rec["load_cpus"], rec
        for buf in ("chase_buffer", "load_buffer"):
            assert rec[buf]["placement"]["verified"], rec[buf]
            assert rec[buf]["node"] == rec["mem_node"]
        if SANITIZED and rec["outcome"] == "timeout" and not rec["points"]:
            busy = True  # the threads did not even start in time: checked below, nothing to inspect
            continue
        delays = [p["delay_ns"] for p in rec["points"] if not p["reference"]]
        assert delays == [0, 6400], rec["points"]
        assert rec["points"][0]["reference"] and rec["points"][0]["load_bytes"] == 0
        for p in rec["points"]:
            if p["outcome"] == "ok":
                assert p["latency"]["median_seconds"] > 0
                assert (p["load"]["median_bytes_per_second"] > 0) != p["reference"]
            else:
                # A disturbed point publishes no figure, and only a busy
                # machine disturbs it: the run counted the discards.
                assert p["outcome"] == "disturbed", p
                assert p["latency"]["median_seconds"] is None
                busy = True
    assert r.returncode == (1 if busy else 0), r.stderr
    # The plot: one polyline per record with a figure (a record whose every
    # point a busy machine disturbed has nothing to draw), in a well-formed
    # SVG document.
    root = ET.parse(plot).getroot()
    assert root.tag == SVG + "svg"
    drawn = [rec for rec in records if any(p["outcome"] == "ok" for p in rec["points"])]
    assert len(root.findall(f".//{SVG}polyline")) == len(drawn), records
    assert "cpu" in plot.read_text() and "read2-ntwrite1" in plot.read_text()


def test_table_shows_one_curve_per_pair_and_traffic(run):
    needs_two_cpus()
    r = run("probe", "--tests", "loaded_latency", "--traffic", "read", *SMALL)
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout.count("Loaded latency, cpu") == 1, r.stdout
    assert "idle" in r.stdout and "6400" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["--traffic", "write"], "--traffic"),
    (["--delays", "-5"], "--delays"),
    (["--load-threads", "-1"], "--load-threads"),
])
def test_bad_loaded_latency_flags_name_the_flag(run, args, needle):
    r = run("probe", "--tests", "loaded_latency", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert needle in r.stderr


def test_plot_unwritable_is_an_error(run, tmp_path):
    needs_two_cpus()
    r = run("probe", "--tests", "loaded_latency", "--traffic", "read", "--plot",
            str(tmp_path / "missing-dir" / "x.svg"), *SMALL)
    assert r.returncode == 1
    assert "cannot write the plot" in r.stderr
