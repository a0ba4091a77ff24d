# SPDX-License-Identifier: Apache-2.0
"""`numaprobe probe --tests peak_bandwidth`: every allowed CPU of a node
against each node's memory (Intel MLC's --bandwidth_matrix), in a table and in
JSON, as a person asks for it. Real binary on this machine (one NUMA node; the
QEMU guests prove the per-node pinning on several, tests/vm/test_vm_numa.py).
Structure and placement are asserted, never figures' sizes."""
import json
import os
import re

import pytest

SMALL = ["--bandwidth-buffer", "64MiB", "--peak-burst", "1MiB", "--bursts", "3", "--lock-file", ""]
# Sanitizer builds run the threads several times slower: a thread may miss
# the burst barrier's deadline, which ends the run with outcome timeout.
SANITIZED = os.environ.get("NUMAPROBE_SANITIZED") == "1"


def reserved_cpus():
    """isolated and nohz_full CPUs: no probe uses them (daemon/probing/cpu_chooser.h)."""
    cpus = set()
    for name in ("isolated", "nohz_full"):
        try:
            text = open(f"/sys/devices/system/cpu/{name}").read().strip()
        except OSError:
            continue
        for part in filter(None, text.split(",")):
            first, _, last = part.partition("-")
            cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def node_cpus(out):
    """Each node's CPUs a probe may use, from the topology the run printed."""
    excluded = set(out["topology"]["disallowed_cpus"]) | reserved_cpus()
    return {n["id"]: set(n["cpus"]) - excluded for n in out["topology"]["nodes"]}


def check_record(rec, threads, allowed):
    """One run: its threads, their CPUs, its buffer's verified placement, and
    a figure (per thread too) only when it is ok. A run that is not ok must
    show that the machine was busy (discarded bursts)."""
    assert rec["threads"] == len(rec["cpus"]) == threads, rec
    assert len(set(rec["cpus"])) == threads and set(rec["cpus"]) <= allowed, rec
    assert rec["buffer"]["node"] == rec["mem_node"] and rec["buffer"]["placement"]["verified"], rec["buffer"]
    # Four bursts of every thread at least (the rotation rule), and at least --bandwidth-buffer.
    assert rec["buffer"]["bytes"] >= max(64 << 20, 4 * (1 << 20) * threads), rec["buffer"]
    if rec["outcome"] == "ok":
        assert rec["bytes_per_burst"] == threads * (1 << 20), rec  # every thread's burst counted
        assert rec["median_bytes_per_second"] > 0
        assert rec["per_thread_bytes_per_second"] == pytest.approx(rec["median_bytes_per_second"] / threads)
        return False
    expected = ("disturbed", "timeout") if SANITIZED else ("disturbed",)
    assert rec["outcome"] in expected, rec
    assert sum(rec["discards"].values()) > 0 or rec["outcome"] == "timeout", \
        f"not ok without evidence of a busy machine: {rec}"
    assert rec["median_bytes_per_second"] is None and rec["per_thread_bytes_per_second"] is None, rec
    return True


def test_not_run_by_default(run):
    assert "=latency,bandwidth,core_to_core" in run("probe", "--help").stdout, "--tests shows its default"


def test_every_cpu_of_the_node_by_default(run):
    r = run("probe", "--tests", "peak_bandwidth", "--format", "json", *SMALL)
    out = json.loads(r.stdout)
    records = out["peak_bandwidth"]
    nodes = {(p["cpu_node"], p["mem_node"]) for p in out["topology"]["plan"]["memory_pairs"]}
    # One run per node pair and op (read, non-temporal write).
    assert sorted((rec["cpu_node"], rec["mem_node"], rec["op"]) for rec in records) == \
        sorted((c, m, op) for c, m in nodes for op in ("read", "write")), records
    cpus = node_cpus(out)
    busy = any([check_record(rec, len(cpus[rec["cpu_node"]]), cpus[rec["cpu_node"]]) for rec in records])
    assert r.returncode == (1 if busy else 0), r.stderr


def test_threads_chooses_the_count(run):
    r = run("probe", "--tests", "peak_bandwidth", "--threads", "1", "--format", "json", *SMALL)
    out = json.loads(r.stdout)
    records = out["peak_bandwidth"]
    assert records
    busy = any([check_record(rec, 1, node_cpus(out)[rec["cpu_node"]]) for rec in records])
    assert r.returncode == (1 if busy else 0), r.stderr


def test_table_is_the_bandwidth_matrix(run):
    r = run("probe", "--tests", "peak_bandwidth", *SMALL)
    topology = json.loads(run("topology", "--format", "json").stdout)
    cpus = node_cpus({"topology": topology})
    planned = {p["cpu_node"] for p in topology["plan"]["memory_pairs"]}
    for op in ("read", "write"):
        title = f"Peak memory bandwidth, {op} (GB/s, median; all threads together, "
        assert title in r.stdout, r.stdout
    # A row per CPU node naming its CPU count, a column per memory node.
    rows = re.findall(r"^node (\d+) \((\d+) CPUs?\)\s+(\S+)", r.stdout, re.M)
    assert sorted(int(node) for node, _, _ in rows) == sorted(list(planned) * 2), r.stdout
    assert all(int(count) == len(cpus[int(node)]) for node, count, _ in rows), r.stdout
    assert "cpus \\ memory" in r.stdout and "node 0" in r.stdout


def test_bad_values_are_refused_naming_the_flag(run):
    for args, words in ((["--peak-burst", "100000"], "--peak-burst: 100000 is not a multiple of 64 bytes"),
                        (["--peak-burst", "32KiB"], "--peak-burst: 32KiB is out of range [64KiB, 64TiB]"),
                        (["--threads", "0"], "--threads: 0 is out of range [1, 1024]")):
        r = run("probe", "--tests", "peak_bandwidth", *args)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)


def test_check_config_names_a_bad_daemon_setting(run, tmp_path):
    """The daemon's keys (tests/integration/test_peak_schedule.py runs it):
    each bad value is refused naming its key; the section as written in the
    reference is accepted."""
    config = tmp_path / "numaprobe.yaml"
    for line, words in (("max_busy: 2", "probes.peak_bandwidth.max_busy"),
                        ("interval: 10s", "probes.peak_bandwidth.interval"),
                        ("duty_cycle: 0", "probes.peak_bandwidth.duty_cycle"),
                        ("threads: -1", "probes.peak_bandwidth.threads")):
        config.write_text(f"probes:\n  peak_bandwidth:\n    enabled: true\n    {line}\n")
        r = run("check-config", str(config))
        assert r.returncode != 0 and words in r.stderr, (line, r.stderr)
    config.write_text("probes:\n  peak_bandwidth: {enabled: true, interval: 6h, duty_cycle: 0.01, max_busy: 0.1,"
                      " threads: 0, buffer_size: 256MiB, burst_size: 64MiB, bursts: 5}\n")
    r = run("check-config", str(config))
    assert r.returncode == 0, r.stderr
