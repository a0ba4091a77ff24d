# SPDX-License-Identifier: Apache-2.0
"""`numaprobe serve` as an operator runs it: the real binary on a free port,
scraped over HTTP. This machine has one NUMA node, so the local pair (0, 0) is
what exists; multi-node series are asserted in tests/vm."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from daemon import Daemon, exit_allowance, exit_decision_seconds, has_sample, parse_metrics, write_config

CONTRACT = [
    "numaprobe_memory_latency_seconds", "numaprobe_memory_latency_spread_seconds",
    "numaprobe_memory_bandwidth_bytes_per_second", "numaprobe_core_to_core_latency_seconds",
    "numaprobe_memory_latency_baseline_seconds", "numaprobe_memory_bandwidth_baseline_bytes_per_second",
    "numaprobe_numa_distance", "numaprobe_probe_runs_total", "numaprobe_probe_last_success_timestamp_seconds",
    "numaprobe_probe_cpu_seconds_total", "numaprobe_duty_cycle_ratio", "numaprobe_duty_cycle_budget_ratio",
    "numaprobe_samples_discarded_total", "numaprobe_placement_failures_total", "numaprobe_probe_config_info",
    "numaprobe_host_info", "numaprobe_build_info", "numaprobe_config_last_reload_successful",
    "numaprobe_memory_latency_remote_local_ratio",
]


# Sanitizer builds run several times slower; their wall-clock bounds are
# scaled. The release build's run of this file holds the real bounds.
SLOWDOWN = 5 if os.environ.get("NUMAPROBE_SANITIZED") == "1" else 1


def two_cpus():
    return len(os.sched_getaffinity(0)) >= 2


@pytest.fixture
def workdir(tmp_path):
    return str(tmp_path)


def series(metrics, name, **labels):
    return [v for l, v in metrics.get(name, []) if all(l.get(k) == v2 for k, v2 in labels.items())]


def test_every_contract_metric_with_plausible_values(numaprobe_bin, workdir):
    started = time.time()
    with Daemon(numaprobe_bin, write_config(workdir)) as d:
        d.wait_ready()
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_baseline_complete 1"), what="baseline")
        c2c = "numaprobe_core_to_core_latency_seconds"
        if two_cpus():
            # core_to_core has no baseline, so the baseline does not wait for
            # it: wait for its first run to end (under a sanitizer on a busy
            # machine that can take minutes), then for its figure.
            d.wait_for(lambda: sum(v for labels, v in parse_metrics(d.metrics()).get("numaprobe_probe_runs_total", [])
                                   if labels["probe"] == "core_to_core") > 0, what="a core-to-core run")
            try:
                d.wait_for(lambda: c2c in parse_metrics(d.metrics()), timeout=30, what="a core-to-core figure")
            except AssertionError:
                if SLOWDOWN == 1:
                    raise
        m = parse_metrics(d.metrics())
    missing = [name for name in CONTRACT if name not in m]
    if not two_cpus():
        missing.remove(c2c)
    elif SLOWDOWN > 1 and c2c in missing:
        # Under a sanitizer runtime the ping-pong threads are preempted in every
        # sample, so every core_to_core run may be (correctly) discarded as
        # disturbed, or end in a timeout when a partner thread was starved (seen
        # under TSan beside stress-ng --cpu 1); then the runs must show as such.
        # The release run asserts the figure, also on a busy machine.
        starved = {r: sum(series(m, "numaprobe_probe_runs_total", probe="core_to_core", result=r))
                   for r in ("disturbed", "timeout")}
        runs = {l["result"]: v for l, v in m.get("numaprobe_probe_runs_total", []) if l["probe"] == "core_to_core"}
        assert sum(starved.values()) > 0, f"no core-to-core figure and no disturbed or timed-out run: {runs}"
        print(f"sanitizer run: no core-to-core figure; its runs ended {runs}")
        missing.remove(c2c)
    assert not missing, missing
    lat = series(m, "numaprobe_memory_latency_seconds", cpu_node="0", mem_node="0")
    assert len(lat) == 1 and 1e-8 < lat[0] < 2e-6, lat
    assert series(m, "numaprobe_memory_latency_spread_seconds", cpu_node="0", mem_node="0")[0] >= 0
    assert series(m, "numaprobe_memory_latency_remote_local_ratio", cpu_node="0", mem_node="0") == [1.0]
    for op in ("read", "write", "copy"):
        bw = series(m, "numaprobe_memory_bandwidth_bytes_per_second", cpu_node="0", mem_node="0", op=op)
        assert len(bw) == 1 and 1e8 < bw[0] < 1e12, (op, bw)
    if c2c in m:
        c2c = m[c2c]
        assert all(0 < v < 1e-5 for _, v in c2c), c2c
        assert {l["relation"] for l, _ in c2c} <= {"smt", "same_llc", "same_node", "cross_node"}
        assert all(l["line_node"] == "0" for l, _ in c2c)
    assert series(m, "numaprobe_numa_distance", cpu_node="0", mem_node="0") == [10.0]
    assert series(m, "numaprobe_probe_runs_total", probe="latency", result="ok")[0] >= 1
    assert series(m, "numaprobe_probe_runs_total", probe="latency", result="placement_mismatch") == [0.0]
    assert series(m, "numaprobe_probe_cpu_seconds_total", probe="latency")[0] > 0
    assert series(m, "numaprobe_placement_failures_total", mem_node="0", reason="placement_mismatch") == [0.0]
    ts = series(m, "numaprobe_probe_last_success_timestamp_seconds", probe="latency", cpu_node="0", mem_node="0")
    # Wall-clock seconds of a run of this daemon (the clock's whole seconds
    # either side): not milliseconds, not another epoch.
    assert ts and started - 1 <= ts[0] <= time.time() + 1, (started, ts)
    assert 0 < m["numaprobe_duty_cycle_ratio"][0][1] < 0.5
    assert m["numaprobe_duty_cycle_budget_ratio"][0][1] == 0.2
    info = m["numaprobe_probe_config_info"]
    latency_info = [l for l, _ in info if l["probe"] == "latency"][0]
    assert latency_info["stride"] == "128" and latency_info["page_size"] in ("4KiB", "2MiB-thp", "2MiB-hugetlb")
    host = m["numaprobe_host_info"][0][0]
    assert host["cpu_model"] and host["kernel"] == os.uname().release and len(host["fingerprint"]) == 16
    assert m["numaprobe_build_info"][0][0]["version"]
    assert m["numaprobe_config_last_reload_successful"][0][1] == 1
    base = series(m, "numaprobe_memory_latency_baseline_seconds", cpu_node="0", mem_node="0")
    assert len(base) == 1 and 1e-8 < base[0] < 2e-6


def test_promtool_check_metrics_reports_nothing(numaprobe_bin, workdir):
    promtool = shutil.which("promtool")
    if not promtool:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool missing on CI: .ci/install-deps installs the prometheus package")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    with Daemon(numaprobe_bin, write_config(workdir)) as d:
        d.wait_ready()
        body = d.metrics()
    r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr


def test_endpoints(numaprobe_bin, workdir):
    with Daemon(numaprobe_bin, write_config(workdir)) as d:
        assert d.get("/-/healthy")[0] == 200
        d.wait_ready()
        status, ctype, body = d.get("/")
        assert status == 200 and "text/html" in ctype
        assert "/metrics" in body and "numaprobe" in body
        status, ctype, _ = d.get("/metrics")
        assert status == 200 and ctype.startswith("text/plain")
        assert d.get("/no/such/page")[0] == 404


def test_not_ready_until_first_round(numaprobe_bin, workdir):
    # A budget this small makes the first round take minutes: readiness must wait.
    with Daemon(numaprobe_bin, write_config(workdir, duty_cycle=0.0001)) as d:
        assert d.get("/-/healthy")[0] == 200
        assert d.get("/-/ready")[0] == 503
        assert d.get("/metrics")[0] == 200


def test_sigterm_exits_zero_within_a_second_even_mid_probe(numaprobe_bin, workdir):
    """SIGTERM while a latency probe runs. Its samples are 10^7 dependent loads
    each (the most the configuration allows) over a 256 MiB buffer, far past
    any LLC: every load goes to memory, 50 ns at the very least, so a sample
    takes half a second on any machine (seconds on this one) and 0.2 s after
    the probe's debug line "starting latency cpu N -> node M" it still runs;
    the log confirms it (no end of the run before "Received SIGTERM"). The
    daemon decides to exit within a second: the probe notices between
    samples, or is left behind after 250 ms."""
    config = write_config(workdir, duty_cycle=0.5, interval="1s", loads=10_000_000, buffer_size="256MiB")
    with Daemon(numaprobe_bin, config) as d:
        d.wait_for(lambda: "starting latency" in d.logs(), timeout=60 * SLOWDOWN, what="a latency probe to start")
        time.sleep(0.2)
        code, took = d.stop()
        reference = d.reference_seconds()
        logs = d.logs()
    assert code == 0, logs[-3000:]
    before_sigterm = logs.split("starting latency", 1)[1].split("Received SIGTERM", 1)[0]
    assert "latency cpu" not in before_sigterm, f"the probe ended before the SIGTERM:\n{logs[-3000:]}"
    # The promise is the exit decision within a second; the process is gone
    # once its threads are joined or left and it has exited, which is work
    # that takes as long as the machine makes it: held to a reference timed
    # right after (Daemon.reference_seconds), as in
    # test_sigterm_on_a_saturated_host.
    decided = exit_decision_seconds(logs)
    assert decided < 1.0 * SLOWDOWN, f"{decided:.2f} s from SIGTERM to the exit decision\n{logs[-3000:]}"
    print(f"decided {decided:.2f} s, gone {took:.2f} s, reference {reference:.2f} s")
    assert took < exit_allowance(decided, reference), f"{took:.2f} s, reference {reference:.2f} s\n{logs[-3000:]}"


@pytest.mark.parametrize("priority", ["idle", "nice19"])
def test_sigterm_on_a_saturated_host(numaprobe_bin, workdir, priority):
    """Every CPU busy: probes get (almost) no CPU. The daemon must still answer
    SIGTERM at once instead of waiting for a probe that cannot run: the exit
    decision comes within a second at either priority. After it the kernel
    must still schedule each of the process's threads (at most 8, and the
    starved probe's) to tear it down, and on saturated CPUs that takes as long
    as the load makes it: the process-gone bound is a reference timed on the
    same saturated CPUs (Daemon.reference_seconds), the decision bound 1 s
    (config/numaprobe.yaml, schedule.priority, says so)."""
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in os.sched_getaffinity(0)]
    try:
        with Daemon(numaprobe_bin, write_config(workdir, duty_cycle=0.5, priority=priority)) as d:
            time.sleep(2)  # the first probe has been handed to the starved worker
            assert d.get("/-/healthy")[0] == 200
            code, took = d.stop()
            reference = d.reference_seconds()
            logs = d.logs()
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert code == 0, logs
    decided = exit_decision_seconds(logs)
    print(f"{priority}: decided {decided:.2f} s, gone {took:.2f} s, reference {reference:.2f} s")
    assert decided < 1.0 * SLOWDOWN, f"{decided:.2f} s from SIGTERM to the exit decision\n{logs[-3000:]}"
    assert took < exit_allowance(decided, reference), f"{took:.2f} s, reference {reference:.2f} s\n{logs[-3000:]}"


def test_sigint_also_stops_cleanly(numaprobe_bin, workdir):
    with Daemon(numaprobe_bin, write_config(workdir)) as d:
        code, _ = d.stop(signal.SIGINT)
        assert code == 0, d.logs()


def test_reload_good_then_bad_config_keeps_the_good_one(numaprobe_bin, workdir):
    cfg = write_config(workdir, duty_cycle=0.2)
    with Daemon(numaprobe_bin, cfg) as d:
        d.wait_ready()
        write_config(workdir, duty_cycle=0.3)
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_duty_cycle_budget_ratio 0.3"), what="new budget")
        assert has_sample(d.metrics(), "numaprobe_config_last_reload_successful 1")
        with open(cfg, "a") as f:
            f.write("schedule_typo: 1\n")
        d.signal(signal.SIGHUP)
        d.wait_for(lambda: has_sample(d.metrics(), "numaprobe_config_last_reload_successful 0"), what="failed reload")
        assert has_sample(d.metrics(), "numaprobe_duty_cycle_budget_ratio 0.3")
        assert "schedule_typo" in d.logs()
        assert d.proc.poll() is None
        assert d.stop()[0] == 0


# Every broken key of each fixture, with its line; a syntax error has no key.
@pytest.mark.parametrize("fixture, needles", [
    ("bad_unknown_key.yaml", ["line 4: probes.latency.strid: unknown key (did you mean stride_bytes?)",
                              "line 6: schedul: unknown key (did you mean schedule?)"]),
    ("bad_types.yaml", ["line 4: probes.latency.enabled: ", "line 5: probes.latency.samples: ",
                        "line 7: probes.bandwidth.ops: ", "line 9: schedule.duty_cycle: ",
                        "line 10: schedule.interval: ", "line 12: memory.budget: ", "line 14: targets.cpus: "]),
    ("bad_range.yaml", ["line 4: probes.latency.stride_bytes: ", "line 5: probes.latency.samples: ",
                        "line 7: probes.core_to_core.round_trips: ", "line 9: schedule.duty_cycle: ",
                        "line 10: schedule.interval: ", "line 11: schedule.jitter: ", "line 13: memory.budget: ",
                        "line 15: baseline.rounds: "]),
    ("bad_syntax.yaml", ["line 5: invalid YAML: "]),
])
def test_bad_config_is_rejected_naming_key_and_line(run, fixture, needles):
    path = os.path.join(os.environ["NUMAPROBE_SOURCE_DIR"], "tests", "fixtures", "config", fixture)
    r = run("check-config", path)
    assert r.returncode == 1, r.stdout + r.stderr
    for needle in needles:
        assert f"{path}: {needle}" in r.stderr, r.stderr
    r = run("serve", "--config.file", path, "--web.listen-address", "127.0.0.1:0", timeout=10)
    assert r.returncode == 1, r.stderr
    for needle in needles:
        assert f"{path}: {needle}" in r.stderr, r.stderr


def test_config_that_is_not_a_regular_file_is_rejected(run):
    """/dev/zero used to grow the text until an uncaught std::bad_alloc aborted
    check-config (exit 134); a daemon reloading it on SIGHUP would have too."""
    r = run("check-config", "/dev/zero", timeout=10)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cannot read /dev/zero: it is a character device, not a regular file" in r.stderr, r.stderr


def test_default_config_checks_clean(run):
    path = os.path.join(os.environ["NUMAPROBE_SOURCE_DIR"], "config", "numaprobe.yaml")
    r = run("check-config", path)
    assert r.returncode == 0, r.stderr


def test_bad_flags(run):
    r = run("serve", "--web.listen-address", "nonsense")
    assert r.returncode != 0 and "nonsense" in r.stderr
    r = run("serve", "--log.level", "loud")
    assert r.returncode == 2 and "--log.level" in r.stderr


def test_fact_root_flags_are_checked_before_anything_starts(run, tmp_path):
    """--path.procfs, --path.sysfs and --path.rootfs (node_exporter's names):
    a path that is missing or not a directory is a usage error naming the
    flag; so is a --path.rootfs without the proc or sys it implies."""
    a_file = tmp_path / "file"
    a_file.write_text("")
    for flag, path, why in (("--path.procfs", tmp_path / "missing", "no such directory"),
                            ("--path.sysfs", a_file, "not a directory"),
                            ("--path.rootfs", tmp_path / "missing", "no such directory")):
        r = run("serve", flag, str(path), timeout=10)
        assert r.returncode == 2, (flag, r.stdout + r.stderr)
        assert flag in r.stderr and why in r.stderr and str(path) in r.stderr, r.stderr
    (tmp_path / "root" / "proc").mkdir(parents=True)
    r = run("serve", "--path.rootfs", str(tmp_path / "root"), timeout=10)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"--path.rootfs={tmp_path / 'root'}: no such directory: {tmp_path / 'root' / 'sys'}" in r.stderr, r.stderr
    assert "--path.sysfs" in r.stderr, r.stderr
    r = run("serve", "--help")
    text = " ".join(r.stdout.split())
    assert r.returncode == 0 and "--path.procfs DIR=/proc" in text and "--path.sysfs DIR=/sys" in text, text
    assert "--path.rootfs DIR=/ " in text and "in a container, the host's /proc mounted there, e.g. /host/proc" in text


def test_telemetry_path_of_another_endpoint_is_a_usage_error(run):
    """The flag check is the server's (TelemetryPathProblem): /-/ready is
    refused before anything starts, with the usage exit code, naming the flag,
    the path and why."""
    r = run("serve", "--web.telemetry-path", "/-/ready", timeout=10)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--web.telemetry-path" in r.stderr, r.stderr
    assert 'invalid telemetry path "/-/ready": /-/ready is the readiness endpoint' in r.stderr, r.stderr
