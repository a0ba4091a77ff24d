# SPDX-License-Identifier: Apache-2.0
"""`numaprobe probe` and `numaprobe topology` as a person runs them: real
binary, real machine (one NUMA node here; multi-node lives in tests/vm)."""
import json
import os
import re

import pytest

# Small, fast settings: these tests check structure and error handling, not speed.
QUICK = ["--latency-buffer", "64MiB", "--loads", "2000", "--samples", "3",
         "--bandwidth-buffer", "64MiB", "--burst", "4MiB", "--bursts", "3", "--round-trips", "200"]


def allowed_cpus():
    return sorted(os.sched_getaffinity(0))


def test_help_lists_subcommands(run):
    r = run("--help")
    assert r.returncode == 0
    for word in ("probe", "topology"):
        assert word in r.stdout


def test_version(run):
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.startswith("numaprobe, version ")


def test_probe_help_documents_flags(run):
    r = run("probe", "--help")
    assert r.returncode == 0
    for flag in ("--cpus", "--nodes", "--per-cpu", "--c2c-cpus", "--format", "--pages", "--tests"):
        assert flag in r.stdout
    # Which statistic the idle-latency figure is, and what it compares with.
    text = " ".join(r.stdout.split())
    assert "the published figure is the MEDIAN of the --samples accepted samples" in text
    assert "Intel MLC" in text and "multichase -a" in text and "best of its 0.5 s samples" in text
    # `topology` shows the plan `probe` would run, so it takes the same plan flags.
    r = run("topology", "--help")
    assert r.returncode == 0
    for flag in ("--cpus", "--nodes", "--per-cpu", "--c2c-cpus"):
        assert flag in r.stdout


def help_line(text, option):
    """The line of CLI11's option list that starts with `option`."""
    lines = [line for line in text.splitlines() if re.match(rf"^ {{2}}(?:-\w,)?{re.escape(option)}\b", line)]
    assert len(lines) == 1, f"{option} is not listed once in:\n{text}"
    return lines[0]


# An option with a default shows it after `=` in --help, as it is typed: for
# serve (node_exporter-style flags) and probe (a kind's setting in the
# configuration file's size syntax, a page policy by name, a list).
@pytest.mark.parametrize("command, option, default", [
    ("serve", "--log.level", "info"),
    ("serve", "--web.listen-address", ":10062"),
    ("serve", "--web.telemetry-path", "/metrics"),
    ("probe", "--format", "table"),
    ("probe", "--pages", "auto"),
    ("probe", "--bandwidth-buffer", "256MiB"),
    ("probe", "--tests", "latency,bandwidth,core_to_core"),
])
def test_help_shows_defaults(run, command, option, default):
    r = run(command, "--help")
    assert r.returncode == 0, r.stderr
    line = help_line(r.stdout, option)
    assert re.search(rf"={re.escape(default)}(?:\s|$)", line), line


def test_help_shows_no_default_for_an_option_without_one(run):
    """--threads 0 stands for every CPU (its help says so), not a value to type."""
    line = help_line(run("probe", "--help").stdout, "--threads")
    assert "=" not in line.split("  ")[1], line


@pytest.mark.parametrize("args, needle", [
    (["probe", "--cpus", "4095"], "cpu 4095"),
    (["probe", "--nodes", "63"], "node 63"),
    (["probe", "--cpus", "1-"], "--cpus"),
    (["probe", "--nodes", "x"], "--nodes"),
    (["probe", "--format", "xml"], "--format"),
    (["probe", "--tests", "latency,nonsense"], "--tests"),
    (["probe", "--pages", "1G"], "--pages"),
    (["probe", "--stride", "100"], "--stride"),
    (["probe", "--samples", "0"], "--samples"),
    (["probe", "--c2c-timeout-ms", "99"], "--c2c-timeout-ms"),
    (["probe", "--latency-buffer", "lots"], "--latency-buffer"),
    # The configuration file's size syntax: a bare "M" could mean either base.
    (["probe", "--bandwidth-buffer", "64M"], "expected a size such as 256MiB"),
    # The configuration's rotation rule, across flags (kinds/bandwidth.cc).
    (["probe", "--tests", "bandwidth", "--threads", "8"],
     "--bandwidth-buffer 256MiB must be at least 4 x --burst x --threads = 1GiB"),
    (["probe", "--loads", "999"], "--loads: 999 is out of range [1000, 10000000]"),
    (["probe", "--no-such-flag"], "--no-such-flag"),
    (["topology", "--cpus", "4095"], "cpu 4095"),
    (["probe", "--c2c-cpus", "0,4095"], "cpu 4095"),
    (["topology", "--c2c-cpus", "0,4095"], "cpu 4095"),
    (["topology", "--c2c-cpus", "1-"], "--c2c-cpus"),
    (["topology", "--c2c-cpus", "0"], "at least two distinct CPUs"),
    (["frobnicate"], "frobnicate"),
    ([], "subcommand"),
])
def test_bad_arguments_exit_2_and_name_the_problem(run, args, needle):
    r = run(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert needle in r.stderr, r.stderr
    assert r.stdout == ""


def test_topology_json_describes_this_machine(run):
    r = run("topology", "--format", "json")
    assert r.returncode == 0, r.stderr
    topo = json.loads(r.stdout)
    cpus = [c["id"] for c in topo["cpus"]]
    assert cpus == allowed_cpus()
    nodes = {n["id"]: n for n in topo["nodes"]}
    assert 0 in nodes and nodes[0]["memory_bytes"] > 0
    assert topo["distances"]["matrix"][0][0] == 10
    pairs = topo["plan"]["memory_pairs"]
    assert {(p["cpu_node"], p["mem_node"]) for p in pairs} == {(0, 0)}


def test_topology_table_shows_plan(run):
    r = run("topology")
    assert r.returncode == 0, r.stderr
    assert "NUMA nodes" in r.stdout and "Probe plan" in r.stdout


def disturbed_with_evidence(figure):
    """A figure the kernel gave up on because the scheduler kept interrupting
    it: outcome "disturbed" and the preemptions it counted in the reason."""
    return figure["outcome"] == "disturbed" and "context switch" in figure["reason"]


def test_probe_reads_host_facts_under_path_rootfs(run):
    """--path.rootfs: the report's host facts come from proc and sys under it
    (a container's view of the host), here a fixture of a QEMU guest."""
    root = os.path.join(os.environ["NUMAPROBE_SOURCE_DIR"], "tests", "fixtures", "host_facts", "hypervisor", "after")
    r = run("probe", "--format", "json", "--tests", "latency", "--path.rootfs", root, *QUICK)
    assert r.returncode in (0, 1), r.stderr
    host = json.loads(r.stdout)["host"]
    assert host["microcode"] == "0x2b000590" and host["virtualized"] is True, host
    assert "QEMU" in host["hypervisor"], host
    r = run("probe", "--path.procfs", os.path.join(root, "missing"))
    assert r.returncode == 2 and "--path.procfs" in r.stderr, r.stderr


def test_probe_json_has_every_figure_and_verified_placement(run):
    r = run("probe", "--format", "json", *QUICK)
    out = json.loads(r.stdout)
    figures = out["latency"] + out["bandwidth"] + out["core_to_core"]
    # Exit 1 only for a run disturbed on a busy machine (a CI machine runs
    # sanitized daemons beside this test): every figure that is not ok must
    # be "disturbed" with the preemptions counted as the evidence. Placement
    # and shape are asserted for every figure either way.
    busy = [f for f in figures if f["outcome"] != "ok"]
    if r.returncode != 0:
        assert r.returncode == 1 and busy and all(disturbed_with_evidence(f) for f in busy), r.stdout + r.stderr
    assert out["ok"] is (r.returncode == 0)
    assert len(out["latency"]) == 1
    lat = out["latency"][0]
    assert (lat["cpu_node"], lat["mem_node"]) == (0, 0)
    assert lat["buffer"]["bytes"] >= 64 << 20
    assert lat["buffer"]["page_size"] in ("4KiB", "2MiB-thp", "2MiB-hugetlb")
    placement = lat["buffer"]["placement"]
    assert placement["verified"] is True and placement["expected_node"] == 0
    assert placement["pages_checked"] > 0 and placement["pages_misplaced"] == 0
    if lat["outcome"] == "ok":
        assert lat["reason"] == ""
        # Plausible DRAM latency (10 ns .. 2 us) in seconds, not ns.
        assert 1e-8 < lat["median_seconds"] < 2e-6
        assert lat["min_seconds"] <= lat["median_seconds"] <= lat["max_seconds"]
        assert lat["samples"] == 3 and lat["loads_per_sample"] == 2000
    ops = {b["op"]: b for b in out["bandwidth"]}
    assert set(ops) == {"read", "write", "copy"}
    for op, b in ops.items():
        assert b["buffer"]["placement"]["verified"] is True, b
        # --burst 4MiB as every op's figure counts it: copy loads 2 MiB and stores 2 MiB
        assert b["bytes_per_burst"] == 4 << 20
        if b["outcome"] == "ok":
            assert b["median_bytes_per_second"] > 1e8, b
    if len(allowed_cpus()) >= 2:
        assert out["core_to_core"], "two CPUs allowed: a core-to-core pair is expected"
        c = out["core_to_core"][0]
        assert c["line"]["placement"]["verified"] is True
        if c["outcome"] == "ok":
            assert 0 < c["median_seconds"] < 1e-5


def test_probe_table_prints_matrices(run):
    r = run("probe", "--tests", "latency,bandwidth", "--ops", "read", *QUICK)
    # Exit 1 only for a run disturbed on a busy machine, with the evidence
    # (preemptions counted) printed in the table's notes.
    assert r.returncode == 0 or ("disturbed" in r.stdout and "context switch" in r.stdout), r.stdout + r.stderr
    assert "Idle memory latency (ns, median / minimum of the samples; pages: " in r.stdout
    assert "Memory bandwidth, read (GB/s" in r.stdout
    assert "node 0" in r.stdout
    # A measured cell is "median / minimum"; a disturbed one is a "!N" note.
    lines = r.stdout.splitlines()
    row = lines[lines.index(next(l for l in lines if l.startswith("Idle memory latency"))) + 2]
    cell = re.search(r"\)\s+(\S+ / \S+|!\d+)\s*$", row)
    assert cell, row
    if not cell.group(1).startswith("!"):
        median, minimum = (float(x) for x in cell.group(1).split(" / "))
        assert 0 < minimum <= median, row


def test_failed_probe_is_reported_not_hidden(run):
    # hugetlb with no reserved pool must fail with a reason, exit 1, and no figure.
    with open("/proc/sys/vm/nr_hugepages") as f:
        if int(f.read()) > 0:
            pytest.skip("this host has a hugetlb pool reserved; the no-pool path cannot be shown")
    r = run("probe", "--format", "json", "--tests", "latency", "--pages", "hugetlb", *QUICK)
    assert r.returncode == 1, r.stderr
    lat = json.loads(r.stdout)["latency"][0]
    assert lat["outcome"] == "alloc_failed"
    assert "nr_hugepages" in lat["reason"]
    assert lat["median_seconds"] is None
