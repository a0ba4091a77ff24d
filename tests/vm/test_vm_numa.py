# SPDX-License-Identifier: Apache-2.0
"""Multi-node NUMA end-to-end tests: the real numaprobe binary inside QEMU guests.

Two guests boot (one per topology) and run every scenario of that topology in one
boot; the tests then assert on what each scenario saved. Only structure and
placement are asserted, never timings: under emulation every node is the same
host memory. A figure is either `ok`, from samples long enough for the guest's
clock (an emulated HPET read takes about a microsecond), or `coarse_clock`
with no figure: both are legitimate measurements in a guest.

The guest's architecture is the binary's: an x86-64 build boots x86-64 guests,
the release-aarch64 cross build arm64 `virt` guests (vmharness.GUEST_ARCHES), and
the same assertions hold on both.

Prerequisites (qemu-system-x86 or qemu-system-arm, cpio, busybox-static, one
cached Debian kernel, a built numaprobe in $NUMAPROBE_BIN; for arm64 also
qemu-user-static and the arm64 libraries) missing: the tests skip saying why, or
fail when CI=true. A binary without `numaprobe serve` fails the daemon tests.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest

import vmharness as vh

# --------------------------------------------------------------------- topologies

# Symmetric, but not the kernel's default 20: a value only QEMU's SLIT can give.
TWO = vh.VmTopology("two_symmetric", (vh.VmNode(2, 512), vh.VmNode(2, 512)), {(0, 1): 17})

# Node 3 has memory and no CPUs (a CXL or HBM node); distances differ.
FOUR = vh.VmTopology(
    "four_asymmetric",
    (vh.VmNode(2, 384), vh.VmNode(2, 384), vh.VmNode(2, 384), vh.VmNode(0, 384)),
    {(0, 1): 12, (0, 2): 32, (1, 2): 32, (0, 3): 20, (1, 3): 20, (2, 3): 40})

# Small, fast probes: TCG is slow and the figures mean nothing here anyway.
LATENCY = "--latency-buffer 4MiB --samples 3 --loads 2000"
BANDWIDTH = "--bandwidth-buffer 4MiB --burst 1MiB --bursts 2 --ops read --threads 1"
# A core-to-core round trip needs both vCPUs to run, which a TCG guest gives
# them when its one host thread switches between them: how soon is the
# emulator's speed and the host's load, so the run deadline is raised far
# beyond any run here (60 s instead of 1 s) and a pair that works never
# times out, while one that never answers still does.
C2C_TIMEOUT_MS = 60000
C2C = f"--round-trips 200 --c2c-timeout-ms {C2C_TIMEOUT_MS}"
SMALL = f"{LATENCY} {BANDWIDTH} {C2C}"
# Peak bandwidth: every allowed CPU of a node at once (two here), tiny bursts.
PEAK = "--bandwidth-buffer 4MiB --peak-burst 256KiB --bursts 2"
HUGEPAGES_NODE1 = "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"

# The daemon, schema of config/numaprobe.yaml: small buffers, a round
# every second, half a CPU of budget, baseline after one round. Chases of
# 20000 loads: the daemon tests need a latency series for every pair, and on an
# idle host a 2000-load sample under TCG can be shorter than 100 steps of the
# guest's clock (~1 µs each), which would make it coarse_clock. The probe
# scenarios keep 2000 loads, so either outcome is seen there.
SERVE_CONFIG = """\
probes:
  latency: {enabled: true, buffer_size: 4MiB, samples: 3, loads_per_sample: 20000}
  bandwidth: {enabled: true, ops: [read], threads: 1, buffer_size: 4MiB, burst_size: 1MiB, bursts: 2}
  core_to_core: {enabled: true, samples: 3, round_trips: 200, run_timeout_ms: %d}
schedule: {duty_cycle: 0.5, interval: 1s, jitter: 0}
memory: {budget: 64MiB, pages: auto}
baseline: {rounds: 1}
state_directory: /tmp/numaprobe-state
""" % C2C_TIMEOUT_MS
SERVE_ADDRESS = "127.0.0.1:10062"
SERVE_ARGS = f"--config.file /tmp/serve.yaml --web.listen-address {SERVE_ADDRESS} --log.level debug"

# The daemon sizes its rounds by what its tasks cost (serve/rotation.h), and
# under emulation that is the emulator's speed: a faster or slower guest would
# rotate, or stop rotating, part-way through a scenario. Every daemon scenario
# therefore fixes the costs (NUMAPROBE_TEST_TASK_COSTS with
# NUMAPROBE_TEST_MODE=1, serve/task_cost_estimate.h; CPU seconds), so that the
# schedule is the test's choice. These put a full round of any topology here
# (at most 31 tasks) far inside twice the round's budget (2 x 0.5 CPU-s): the
# daemon never rotates. SCENARIO_SERVE_ROTATION fixes costs that make it rotate.
# And none confirms a figure beyond its band (NUMAPROBE_TEST_CONFIRMATIONS=off):
# an emulator's figures are noisy at random, and each confirmation is four
# more runs; without them a round runs its schedule and nothing else, and a
# series has one figure for each of its pair's successful runs.
NO_ROTATION_COSTS = {kind: {"visit_start": 0.001} for kind in ("latency", "bandwidth", "core_to_core")}

# ---------------------------------------------------------------- guest scripts

def serve_helpers(config: str, costs: dict = NO_ROTATION_COSTS) -> str:
    """Shell shared by the daemon scenarios (busybox sh, GUEST_LIB helpers): writes
    `config` and the fixed task `costs`, validates the config, and defines
    start_serve, wait_for, metric and stop_serve.
    Busybox 1.35's `wget -T` segfaults: each fetch is bounded with `timeout`."""
    return f"""
cat >/tmp/serve.yaml <<'EOF'
{config}EOF
cat >/tmp/task_costs.json <<'EOF'
{json.dumps(costs)}
EOF
run check_config numaprobe check-config /tmp/serve.yaml
uptime_cs() {{ awk '{{split($1, a, "."); print a[1] * 100 + a[2]}}' /proc/uptime; }}
# wait_for URL SECONDS: 0 once URL answers 200
wait_for() {{
  i=0
  while [ $i -lt $2 ]; do
    timeout 15 wget -q -O /dev/null "$1" 2>/dev/null && return 0
    kill -0 $SERVE_PID 2>/dev/null || return 1
    sleep 1; i=$((i + 1))
  done
  return 1
}}
# scrape NAME: /metrics into $OUT/NAME
scrape() {{ timeout 15 wget -q -O "$OUT/$1" http://{SERVE_ADDRESS}/metrics; }}
# metric NAME [FILE]: an unlabelled series of the scrape in FILE ($OUT/metrics
# by default) as an integer, "" if absent
metric() {{ awk -v n="$1" '$1 == n {{ printf "%d", $2 }}' "${{2:-$OUT/metrics}}"; }}
# rounds_now NAME: scrapes into $OUT/NAME (again while a scrape fails, up to
# ten times) and prints the rounds the daemon has completed
rounds_now() {{
  n=0
  while [ $n -lt 10 ]; do
    scrape "$1"
    r=$(metric numaprobe_rounds_completed_total "$OUT/$1")
    [ -n "$r" ] && echo "$r" && return 0
    sleep 1; n=$((n + 1))
  done
}}
start_serve() {{
  NUMAPROBE_TEST_MODE=1 NUMAPROBE_TEST_TASK_COSTS=/tmp/task_costs.json NUMAPROBE_TEST_CONFIRMATIONS=off \\
    numaprobe serve {SERVE_ARGS} >"$OUT/serve.log" 2>&1 &
  SERVE_PID=$!
  echo $SERVE_PID >"$OUT/serve.pid"
  # Killed at its time limit, the scenario takes its daemon along: the next
  # scenario's daemon needs the port.
  trap 'kill -TERM $SERVE_PID 2>/dev/null; wait $SERVE_PID; exit 143' TERM
}}
# stop_serve: SIGTERM, wait; records the exit code and the centiseconds the
# stop took, and just before it those of a reference run in the same
# conditions (assert_stopped_cleanly): the same binary started three times
# (REFERENCE_RUNS), reading the config, planning on this guest and exiting.
stop_serve() {{
  r0=$(uptime_cs)
  for n in 1 2 3; do numaprobe check-config /tmp/serve.yaml >/dev/null 2>&1; done
  echo $(( $(uptime_cs) - r0 )) >"$OUT/reference_centiseconds"
  t0=$(uptime_cs)
  kill -TERM $SERVE_PID
  wait $SERVE_PID
  echo $? >"$OUT/serve.rc"
  echo $(( $(uptime_cs) - t0 )) >"$OUT/stop_centiseconds"
}}
"""


def scenario_topology_probe(name: str) -> vh.Scenario:
    """Whole machine: topology and every probe with default pairs."""
    return vh.Scenario(name, f"""
snapshot_nodes sysfs_nodes
run topology numaprobe topology --format json
run probe numaprobe probe --format json --tests latency,bandwidth,core_to_core {SMALL}
run peak numaprobe probe --format json --tests peak_bandwidth {PEAK}
""", timeout=120)


SCENARIO_CPUSET_CPUS = vh.Scenario("cpuset_cpus", f"""
# cgroup v2 cpuset with node 0's CPUs only; this shell (and its children) moves in.
echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/cpus0
echo 0-1 >/sys/fs/cgroup/cpus0/cpuset.cpus
echo 0 >/sys/fs/cgroup/cpus0/cgroup.procs
save cgroup /proc/self/cgroup
save cpus_effective /sys/fs/cgroup/cpus0/cpuset.cpus.effective
run topology numaprobe topology --format json
run probe numaprobe probe --format json --per-cpu --tests latency,bandwidth,core_to_core {SMALL}
run peak numaprobe probe --format json --tests peak_bandwidth {PEAK}
# The same restriction through an affinity mask instead of a cgroup.
echo 0 >/sys/fs/cgroup/cgroup.procs
run taskset_topology taskset -c 0-1 numaprobe topology --format json
""", timeout=120)

SCENARIO_CPUSET_MEMS = vh.Scenario("cpuset_mems", f"""
echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/mems0
echo 0 >/sys/fs/cgroup/mems0/cpuset.mems
echo 0 >/sys/fs/cgroup/mems0/cgroup.procs
save mems_effective /sys/fs/cgroup/mems0/cpuset.mems.effective
run topology numaprobe topology --format json
run explicit numaprobe probe --format json --tests latency --nodes 0,1 {LATENCY}
run default numaprobe probe --format json --tests latency {LATENCY}
""", timeout=60)

# Node 1 requested explicitly (targets.mem_nodes): losing it at run time must be
# counted as a placement failure and its figures withdrawn.
SCENARIO_SERVE_MEMS = vh.Scenario("serve_mems", serve_helpers(SERVE_CONFIG + "targets: {mem_nodes: [0, 1]}\n") + """
# The daemon starts with both nodes allowed; then its cgroup loses node 1 at run
# time (cgroup v2 migrates the pages already there to node 0).
echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/daemon
echo 0 >/sys/fs/cgroup/daemon/cgroup.procs
start_serve
if wait_for http://127.0.0.1:10062/-/ready 60; then note "ready"; else note "never ready"; fi
# Two rounds: the representatives' (whose memory is node 0's, which covers
# both distances) and a whole one, in which node 1 is measured too.
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  [ "$(rounds_now metrics_before)" -ge 2 ] 2>/dev/null && break
  sleep 1; i=$((i + 1))
done
echo 0 >/sys/fs/cgroup/daemon/cpuset.mems
save mems_effective /sys/fs/cgroup/daemon/cpuset.mems.effective
# Until a placement failure on node 1 is published and every node-1 latency
# figure withdrawn, or the daemon has completed two rounds since the change:
# the one under way (or cut short by it) and one that began after it, in which
# every pair ran (the schedule does not rotate: NO_ROTATION_COSTS). The
# assertions hold however long those rounds took.
since=$(rounds_now metrics_after)
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics_after
  grep -q '^numaprobe_placement_failures_total{.*mem_node="1"' "$OUT/metrics_after" &&
    ! grep -q '^numaprobe_memory_latency_seconds{.*mem_node="1"' "$OUT/metrics_after" && break
  [ "$(metric numaprobe_rounds_completed_total "$OUT/metrics_after")" -ge $((${since:-0} + 2)) ] && break
  sleep 1; i=$((i + 1))
done
note "rounds completed: ${since:-none} at the change, $(metric numaprobe_rounds_completed_total "$OUT/metrics_after") at the last scrape"
stop_serve
""", timeout=240)

SCENARIO_HUGEPAGES = vh.Scenario("hugepages", f"""
save pool_before {HUGEPAGES_NODE1}
run none numaprobe probe --format json --tests latency --pages hugetlb --nodes 1 {LATENCY}
echo 8 >{HUGEPAGES_NODE1}
save pool_after {HUGEPAGES_NODE1}
save meminfo_node1 /sys/devices/system/node/node1/meminfo
# Pool on node 1 only: node 1 gets 2 MiB hugetlb pages, node 0 fails with a reason.
run some numaprobe probe --format json --tests latency --pages hugetlb {LATENCY}
run small numaprobe probe --format json --tests latency --pages 4k {LATENCY}
echo 0 >{HUGEPAGES_NODE1}
""", timeout=90)

# Last in its guest: takes CPU 3 (node 1's representative CPU) offline.
SCENARIO_OFFLINE_CPU = vh.Scenario("offline_cpu", f"""
echo 0 >/sys/devices/system/cpu/cpu3/online
save cpus_online /sys/devices/system/cpu/online
run topology numaprobe topology --format json
run probe numaprobe probe --format json --per-cpu --tests latency,bandwidth,core_to_core {SMALL}
run peak numaprobe probe --format json --tests peak_bandwidth {PEAK}
echo 1 >/sys/devices/system/cpu/cpu3/online
""", timeout=120)

# 0 once the scrape in $OUT/metrics has a peer ratio for every remote pair
# whose CPU node has a local recent median (the peer medians need 9 figures,
# the recent medians 5).
PEER_RATIOS_COMPLETE = r"""
peer_ratios_complete() {
  awk '
    function lab(s, k) { return match(s, k "=\"[0-9]+\"") ? substr(s, RSTART + length(k) + 2, RLENGTH - length(k) - 3) : "" }
    /^numaprobe_memory_latency_recent_median_seconds[{]/ && $0 !~ /[{,]cpu="/ {
      c = lab($1, "cpu_node"); m = lab($1, "mem_node")
      if (c == m) local_[c] = 1; else remote[c "," m] = c
    }
    /^numaprobe_memory_latency_recent_remote_local_ratio[{]/ { ratios++ }
    END { want = 0; for (p in remote) if (remote[p] in local_) want++; exit !(want > 0 && ratios == want) }
  ' "$OUT/metrics"
}
"""

# Figures a series needs before the daemon publishes its peer median and so
# its remote/local ratio (serve/results/series_history.h, kPeerWindow), and the rounds
# the guest gives it to get them: one figure a round (the schedule does not
# rotate, and nothing is confirmed), and three to spare for runs lost to
# disturbance.
PEER_WINDOW = 9
PEER_ROUNDS = PEER_WINDOW + 4  # the first round runs the representatives alone

# The "serve" scenario also runs peak bandwidth on its schedule of its own
# (serve/own_schedule.h): the gate off, so that it runs however busy the
# guest's vCPUs are; tiny buffers and bursts.
PEAK_SERVE_CONFIG = SERVE_CONFIG.replace("schedule:", """\
  peak_bandwidth: {enabled: true, max_busy: 1, duty_cycle: 0.5, buffer_size: 4MiB, burst_size: 256KiB, bursts: 2}
schedule:""", 1)
SCENARIO_SERVE = vh.Scenario("serve", serve_helpers(PEAK_SERVE_CONFIG) + PEER_RATIOS_COMPLETE + f"""
run topology numaprobe topology --format json
start_serve
if wait_for http://127.0.0.1:10062/-/ready 90; then note "ready"; else note "never ready"; fi
# The scrape the per-host summaries are checked on: once every remote pair
# has its peer ratio, or once the daemon has completed {PEER_ROUNDS} rounds
# (assert_peer_ratios_match_their_pairs then asks the log why a pair has none).
# Waiting on the daemon's rounds, not on seconds: the same check however fast
# the guest runs. The log's length after the scrape marks what it had logged.
i=0
while [ $i -lt 200 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics
  wc -c <"$OUT/serve.log" >"$OUT/log_bytes_at_scrape"
  if peer_ratios_complete; then note "peer ratios complete after ${{i}}s"; break; fi
  [ "$(metric numaprobe_rounds_completed_total)" -ge {PEER_ROUNDS} ] 2>/dev/null && break
  sleep 1; i=$((i + 1))
done
note "rounds completed at the scrape: $(metric numaprobe_rounds_completed_total)"
stop_serve
""", timeout=240)

# Rotation (rotation.h), forced: task costs fixed so that a full round of the
# 4-node plan costs more than twice the round's budget (2 x duty_cycle 0.5 x
# interval 1 s), so the daemon rotates from its first round over a number of
# rounds known in advance (test_daemon_rotates_pairs_when_a_full_round_exceeds
# _the_budget works it out). The probes are SERVE_CONFIG's small ones: what
# they really cost only paces the rounds. Waits for two whole cycles.
ROTATION_COSTS = {"latency": {"visit_start": 0.1, "continuation": 0.05},
                  "bandwidth": {"visit_start": 0.1, "continuation": 0.05},
                  "core_to_core": {"visit_start": 0.05}}
ROTATION_CONFIG = SERVE_CONFIG.replace("/tmp/numaprobe-state", "/tmp/numaprobe-rotation")
# A restart in the middle of recording (results/result_model.h): the daemon
# records a baseline of 20 figures a series, is stopped after its third round
# (the representatives' round and two whole ones: every series has 2 to 3
# figures, none is armed) and started again. What it recorded comes back from
# the state file, which is kept for the test: the same recording start, the
# figures counted again before the restarted daemon's first run. Structure
# only: rounds are counted, never timed.
RESTART_CONFIG = SERVE_CONFIG.replace("baseline: {rounds: 1}", "baseline: {rounds: 20}").replace(
    "/tmp/numaprobe-state", "/tmp/numaprobe-restart")
SCENARIO_SERVE_RESTART = vh.Scenario("serve_restart", serve_helpers(RESTART_CONFIG) + """
start_serve
if wait_for http://127.0.0.1:10062/-/ready 120; then note "ready"; else note "never ready"; fi
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  [ "$(rounds_now metrics_before)" -ge 3 ] 2>/dev/null && break
  sleep 1; i=$((i + 1))
done
stop_serve
mv "$OUT/serve.log" "$OUT/serve_first.log"
cp /tmp/numaprobe-restart/state.json "$OUT/state.json"
start_serve
# Scraped once the restarted daemon has completed its first round (ready),
# not when it first answers (healthy): until it has planned, its scrape has
# nothing restored to show, and how soon it plans is the guest's speed
# (beside busy loops the arm64 guest scraped before it, twice in a row).
if wait_for http://127.0.0.1:10062/-/ready 120; then scrape metrics_after; else note "never ready after the restart"; fi
stop_serve
""", timeout=300)

SCENARIO_SERVE_ROTATION = vh.Scenario("serve_rotation", serve_helpers(ROTATION_CONFIG, ROTATION_COSTS) + """
run topology numaprobe topology --format json
start_serve
if wait_for http://127.0.0.1:10062/-/ready 120; then note "ready"; else note "never ready"; fi
i=0
while [ $i -lt 300 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics
  rounds=$(metric numaprobe_rotation_rounds); done_=$(metric numaprobe_rounds_completed_total)
  [ "${rounds:-0}" -ge 1 ] && [ "${done_:-0}" -ge $((1 + 2 * rounds)) ] && break
  sleep 1; i=$((i + 1))
done
note "rounds completed: ${done_:-none}; rotation over ${rounds:-none} rounds"
stop_serve
""", timeout=300)

# Unit-test programs run inside the 2-node guest too, named by
# $NUMAPROBE_GUEST_UNIT_TESTS (the cross build sets it): qemu-user, which runs
# them on the build machine, has no mbind, move_pages or get_mempolicy, so
# their placement-dependent tests skip there and are run here, on a real
# kernel of the target architecture with two nodes.
GUEST_UNIT_TESTS = tuple(Path(p) for p in os.environ.get("NUMAPROBE_GUEST_UNIT_TESTS", "").split(":") if p)


# Tests that compare cache and memory timings: the emulator models no caches
# (a flushed and an unflushed chase cost the same), so they cannot hold in a
# TCG guest; they run on the build machine's real CPU (the x86-64 build).
GUEST_UNIT_TESTS_TIMED = ("LatencyTest.SmallBufferIsFlushedSoItsLoadsComeFromMemory",
                          "LatencyTest.L1BufferIsManyTimesFasterThanOnePastTheLlc")


def scenario_unit_tests() -> vh.Scenario:
    exclude = "--gtest_filter=-" + ":".join(GUEST_UNIT_TESTS_TIMED)
    return vh.Scenario("unit_tests", "\n".join(f"run {p.name} {p.name} {exclude}" for p in GUEST_UNIT_TESTS),
                       timeout=300)


# ------------------------------------------------------------------------ fixtures


def unavailable(reason: str):
    """Skip saying why; in CI (CI=true) a missing prerequisite is a failure."""
    if vh.in_ci():
        pytest.fail(f"VM test prerequisite missing in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def serve_status() -> str | None:
    """None when `numaprobe serve` exists, else why the daemon tests fail."""
    binary = vh.default_binary()
    try:
        p = subprocess.run(vh.host_runner(binary) + ["serve", "--help"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, vh.HarnessUnavailable) as e:
        return f"cannot run {binary}: {e}"
    # CLI11 answers --help with exit 0 even after an unknown word: look for serve's own usage.
    if p.returncode != 0 or not re.search(r"^Usage: \S*numaprobe serve\b", p.stdout, re.M):
        return ("`numaprobe serve --help` does not show the serve subcommand (exit %d): this "
                "binary has no daemon\n%s" % (p.returncode, (p.stdout + p.stderr)[-2000:]))
    return None


@pytest.fixture(scope="session")
def serve_missing():
    return serve_status()


def _boot(topology, scenarios, **extra):
    try:
        return vh.boot(topology, scenarios, **extra)
    except vh.HarnessUnavailable as e:
        unavailable(str(e))


@pytest.fixture(scope="module")
def two():
    scenarios = [scenario_topology_probe("probe"), SCENARIO_CPUSET_CPUS, SCENARIO_CPUSET_MEMS,
                 SCENARIO_HUGEPAGES, SCENARIO_SERVE_MEMS, SCENARIO_OFFLINE_CPU]
    if GUEST_UNIT_TESTS:
        scenarios.append(scenario_unit_tests())
        # The tests' fixture files, at the absolute path compiled into them.
        return _boot(TWO, scenarios, extra_binaries=GUEST_UNIT_TESTS,
                     host_trees=(vh.SOURCE_DIR / "tests" / "fixtures",))
    return _boot(TWO, scenarios)


# A guest of a foreign architecture (the arm64 cross build's, emulated
# instruction by instruction on this x86-64 host, several times slower) proves
# what differs between architectures: the kernels' loops, cache flush and
# clock, topology and placement read from its kernel, the daemon's metrics.
# Rotation is the same scheduling code on every architecture, proven by the
# x86-64 guest and the scheduler's unit tests; the foreign guest does not run
# it again, which would add six rounds (about 45 s in the arm64 guest).
def foreign_guest() -> bool:
    try:
        return vh.is_foreign(vh.guest_arch(vh.default_binary()))
    except (OSError, vh.HarnessUnavailable):
        return False


@pytest.fixture(scope="module")
def four():
    scenarios = [scenario_topology_probe("probe"), SCENARIO_SERVE, SCENARIO_SERVE_RESTART]
    if not foreign_guest():
        scenarios.append(SCENARIO_SERVE_ROTATION)
    return _boot(FOUR, scenarios)


# ------------------------------------------------------------------------- helpers

FIGURES = {"latency": ("median_seconds", "min_seconds", "mad_seconds"),
           "bandwidth": ("median_bytes_per_second",),
           "core_to_core": ("median_seconds",),
           "peak_bandwidth": ("median_bytes_per_second",)}


def ok_run(res: vh.ScenarioResult, step: str, want_rc: int = 0) -> dict:
    """The JSON a step printed, after checking its exit code. A probe whose only
    results that are not `ok` are `coarse_clock` exits 1 and is a success here:
    the guest's clock is what it is (see assert_measured)."""
    rc = res.rc(step)
    if rc != want_rc:
        failed = ""
        try:
            report = json.loads(res.text(step + ".out"))
            not_ok = [(kind, r) for kind in FIGURES for r in report.get(kind, []) if r.get("outcome") != "ok"]
            if want_rc == 0 and rc == 1 and not_ok and all(r["outcome"] == "coarse_clock" for _, r in not_ok):
                return report
            failed = "\n".join(f"  {kind}: {failure_summary(r)}" for kind, r in not_ok)
        except (json.JSONDecodeError, AttributeError, KeyError):
            pass
        err = "\n".join(l for l in res.text(step + ".err").splitlines() if not re.match(r"\[\d+/\d+\]", l))
        pytest.fail(f"{res.name}/{step}: exit {rc}, expected {want_rc}\n"
                    f"results not ok:\n{failed or '  (none)'}\nstderr:\n{err[-3000:]}\n"
                    + res.describe(), pytrace=False)
    return res.json(step)


def failure_summary(r: dict) -> str:
    keys = ("cpu", "cpu_a", "cpu_b", "cpu_node", "mem_node", "line_node", "op", "outcome", "reason")
    return json.dumps({k: r[k] for k in keys if k in r})


def assert_on_node(buffer: dict, node: int, what: str):
    """The buffer was verified page by page to live on `node`."""
    assert buffer["node"] == node, f"{what}: buffer node {buffer['node']} != {node}"
    p = buffer["placement"]
    assert p["verified"] is True, f"{what}: placement not verified: {p}"
    assert p["expected_node"] == node, f"{what}: expected_node {p['expected_node']} != {node}"
    assert p["pages_misplaced"] == 0, f"{what}: {p['pages_misplaced']} pages misplaced: {p}"
    assert p["pages_unknown"] == 0, f"{what}: {p['pages_unknown']} pages of unknown node: {p}"
    assert p["observed_node"] == -1, f"{what}: a page observed on node {p['observed_node']}: {p}"
    # Every page, not a sample: at least one check per 2 MiB, or per page
    # where the page is larger (a 32 MiB THP page of a 16 KiB-page kernel).
    per = max(buffer.get("page_bytes") or 0, 2**21)
    assert p["pages_checked"] >= max(1, buffer["bytes"] // per), f"{what}: too few pages checked: {p}"
    # No seccomp in the guest: the kernel's own page-by-page answer must be used.
    assert p["method"] == "move_pages", f"{what}: placement checked by {p['method']}"


def assert_measured(kind: str, r: dict):
    """A legitimate measurement in a guest: `ok` from samples that each span the
    steps of the clock the product states (min_steps_per_sample, 1% a step, at
    least 100) - a spread of zero is then a real, if small, spread - or
    `coarse_clock`, naming the clock's step and the sample too short for it,
    with no figure. Either way the buffer or line is verified on its node."""
    what = f"{kind} {failure_summary(r)}"
    assert r["outcome"] in ("ok", "coarse_clock"), what
    clock = r["clock"]
    assert clock["resolution_seconds"] > 0, f"{what}: the clock's step was not measured: {clock}"
    assert clock["min_steps_per_sample"] >= 100, f"{what}: {clock}"
    steps = clock["shortest_sample_seconds"] / clock["resolution_seconds"]
    if r["outcome"] == "ok":
        for figure in FIGURES[kind]:
            value = r.get(figure)
            assert isinstance(value, (int, float)), f"{what}: {figure} = {value}"
            # MAD is a spread: zero when the samples agree to the clock's step.
            assert value >= 0 if figure.startswith("mad_") else value > 0, f"{what}: {figure} = {value}"
        assert steps >= clock["min_steps_per_sample"], \
            f"{what}: ok from a sample of {steps:.1f} clock steps: {clock}"
    else:
        assert_no_figure(kind, r)
        assert steps < clock["min_steps_per_sample"], f"{what}: coarse_clock for a resolved sample: {clock}"
        assert "steps of the clock" in r["reason"], what
    if kind == "core_to_core":
        assert_on_node(r["line"], r["line_node"], what)
    else:
        assert_on_node(r["buffer"], r["mem_node"], what)


def assert_peak(res: vh.ScenarioResult, step: str, node_cpus: dict[int, set[int]]) -> list[dict]:
    """The peak bandwidth runs of `step`: one per CPU node with allowed CPUs,
    memory node and op, each streaming from every allowed CPU of its CPU node
    and no other (`node_cpus`), over a buffer verified on its memory node.
    Its figure is `ok` or `coarse_clock` (assert_measured), or `disturbed`
    with the discarded bursts counted: a TCG guest runs its vCPUs one at a
    time on one host thread, and a thread the emulator has not yet switched
    to can miss the burst barrier's deadline (discards.timeout) - the threads
    really did not stream together, and the run says so instead of a figure;
    or `timeout` when a thread missed it ten times over, saying so."""
    report = res.json(step)
    records = report["peak_bandwidth"]
    not_ok = [r for r in records if r["outcome"] not in ("ok",)]
    assert res.rc(step) == (1 if not_ok else 0), f"{res.name}/{step}: exit {res.rc(step)}\n" + res.describe()
    for r in records:
        allowed = node_cpus[r["cpu_node"]]
        assert r["threads"] == len(r["cpus"]) == len(allowed) and set(r["cpus"]) == allowed, r
        if r["outcome"] in ("disturbed", "timeout"):
            assert r["median_bytes_per_second"] is None, r
            assert sum(r["discards"].values()) > 0 or "burst barrier" in r["reason"], r
            assert_on_node(r["buffer"], r["mem_node"], f"peak_bandwidth {failure_summary(r)}")
        else:
            assert_measured("peak_bandwidth", r)
            if r["outcome"] == "ok":
                assert r["per_thread_bytes_per_second"] == pytest.approx(r["median_bytes_per_second"] / len(allowed))
    return records


def assert_no_figure(kind: str, r: dict):
    for figure in FIGURES[kind]:
        assert r.get(figure) is None, f"{kind} with outcome {r['outcome']} publishes {figure}={r[figure]}"


def assert_distances(topology_json: dict, vm: vh.VmTopology):
    d = topology_json["distances"]
    assert d["nodes"] == list(range(len(vm.nodes)))
    assert d["matrix"] == vm.matrix(), f"distances {d['matrix']} != QEMU's {vm.matrix()}"


def assert_nodes(topology_json: dict, vm: vh.VmTopology, cpus: set[int] | None = None):
    nodes = {n["id"]: n for n in topology_json["nodes"]}
    assert sorted(nodes) == list(range(len(vm.nodes))), f"nodes {sorted(nodes)}"
    for i, spec in enumerate(vm.nodes):
        want = [c for c in vm.node_cpus(i) if cpus is None or c in cpus]
        assert nodes[i]["cpus"] == want, f"node {i} cpus {nodes[i]['cpus']} != {want}"
        assert nodes[i]["memory_bytes"] > spec.mem_mib * 2**20 // 2, f"node {i}: {nodes[i]}"
    for c in topology_json["cpus"]:
        assert c["node"] == vm.cpu_node(c["id"]), f"cpu {c}"


def used_cpus(probe: dict) -> set[int]:
    """Every CPU any result (or the plan) names."""
    cpus = set()
    for r in probe.get("latency", []):
        cpus.add(r["cpu"])
    for r in probe.get("bandwidth", []):
        cpus.add(r["cpu"])
        cpus.update(r.get("cpus") or [])
    for r in probe.get("core_to_core", []):
        cpus.update((r["cpu_a"], r["cpu_b"]))
    return cpus | plan_cpus(probe["topology"])


def plan_cpus(topology_json: dict) -> set[int]:
    plan = topology_json["plan"]
    return ({p["cpu"] for p in plan["memory_pairs"]}
            | {c for p in plan["c2c_pairs"] for c in (p["cpu_a"], p["cpu_b"])})


def pairs(results: list[dict]) -> set[tuple[int, int]]:
    return {(r["cpu_node"], r["mem_node"]) for r in results}


# ------------------------------------------------------------------ 2 nodes, symmetric


def test_two_nodes_all_pairs_verified(two):
    res = two["probe"]
    topo = ok_run(res, "topology")
    probe = ok_run(res, "probe")
    assert_nodes(topo, TWO)
    assert_nodes(probe["topology"], TWO)
    assert_distances(topo, TWO)
    assert_distances(probe["topology"], TWO)
    want = {(c, m) for c in (0, 1) for m in (0, 1)}
    assert pairs(probe["latency"]) == want
    assert len(probe["latency"]) == 4
    for r in probe["latency"]:
        assert TWO.cpu_node(r["cpu"]) == r["cpu_node"], r
        assert_measured("latency", r)
    assert pairs(probe["bandwidth"]) == want
    for r in probe["bandwidth"]:
        assert_measured("bandwidth", r)
    assert probe["core_to_core"], "no core-to-core result"
    for r in probe["core_to_core"]:
        assert_measured("core_to_core", r)
        same = TWO.cpu_node(r["cpu_a"]) == TWO.cpu_node(r["cpu_b"])
        assert (r["relation"] == "cross_node") != same, r
    assert "cross_node" in {r["relation"] for r in probe["core_to_core"]}
    peak = assert_peak(res, "peak", {n: set(TWO.node_cpus(n)) for n in TWO.cpu_nodes()})
    assert sorted((r["cpu_node"], r["mem_node"], r["op"]) for r in peak) == \
        sorted((c, m, op) for c, m in want for op in ("read", "write"))


# ------------------------------------------------- 4 nodes, asymmetric, CPU-less node


def test_four_nodes_memory_only_node_and_distances(four):
    res = four["probe"]
    topo = ok_run(res, "topology")
    probe = ok_run(res, "probe")
    for t in (topo, probe["topology"]):
        assert_nodes(t, FOUR)
        assert_distances(t, FOUR)
        assert {c["node"] for c in t["cpus"]} == {0, 1, 2}
    node3 = next(n for n in topo["nodes"] if n["id"] == 3)
    assert node3["cpus"] == [] and node3["memory_bytes"] > 0
    want = {(c, m) for c in (0, 1, 2) for m in (0, 1, 2, 3)}
    for kind in ("latency", "bandwidth"):
        got = pairs(probe[kind])
        assert got == want, f"{kind} pairs: missing {sorted(want - got)}, extra {sorted(got - want)}"
        assert 3 not in {r["cpu_node"] for r in probe[kind]}
        for r in probe[kind]:
            assert_measured(kind, r)
    assert 3 not in {p["cpu_node"] for p in topo["plan"]["memory_pairs"]}
    for r in probe["core_to_core"]:
        assert_measured("core_to_core", r)
    # Node 3 has no CPU to stream from: no row; its memory is a column.
    peak = assert_peak(res, "peak", {n: set(FOUR.node_cpus(n)) for n in FOUR.cpu_nodes()})
    assert {(r["cpu_node"], r["mem_node"]) for r in peak} == want and len(peak) == 2 * len(want)


# --------------------------------------------------------------- restricted cpuset


def test_cpuset_cpus_only_node0_cpus_used_remote_memory_measured(two):
    res = two["cpuset_cpus"]
    assert res.text("cpus_effective").strip() == "0-1", res.describe()
    topo = ok_run(res, "topology")
    probe = ok_run(res, "probe")
    for t in (topo, probe["topology"], ok_run(res, "taskset_topology")):
        assert [c["id"] for c in t["cpus"]] == [0, 1]
        assert sorted(t["disallowed_cpus"]) == [2, 3]
        assert_nodes(t, TWO, cpus={0, 1})
        assert plan_cpus(t) <= {0, 1}, t["plan"]
    assert used_cpus(probe) <= {0, 1}, f"CPUs outside the cpuset used: {used_cpus(probe)}"
    assert pairs(probe["latency"]) == {(0, 0), (0, 1)}
    assert {r["cpu"] for r in probe["latency"]} == {0, 1}, "--per-cpu should use both allowed CPUs"
    for kind in ("latency", "bandwidth", "core_to_core"):
        assert probe[kind], f"no {kind} result"
        for r in probe[kind]:
            assert_measured(kind, r)
    # Node 0's two CPUs stream to both nodes' memory; node 1 has no allowed CPU.
    peak = assert_peak(res, "peak", {0: set(TWO.node_cpus(0))})
    assert {(r["cpu_node"], r["mem_node"]) for r in peak} == {(0, 0), (0, 1)}


def test_cpuset_mems_node1_not_allowed(two):
    res = two["cpuset_mems"]
    assert res.text("mems_effective").strip() == "0", res.describe()
    topo = ok_run(res, "topology")
    assert topo["disallowed_nodes"] == [1]
    assert [n["id"] for n in topo["nodes"]] == [0]
    # Node 1 asked for explicitly: refused, naming node 1 and why.
    rc, err = res.rc("explicit"), res.text("explicit.err")
    assert rc != 0, f"probe --nodes 0,1 under cpuset.mems=0 exited 0:\n{res.text('explicit.out')[:2000]}"
    assert re.search(r"\bnode 1\b", err) and re.search(r"cpuset\.mems|not allowed", err), err
    out = res.text("explicit.out").strip()
    if out:
        for r in json.loads(out).get("latency", []):
            if r["mem_node"] == 1:
                assert r["outcome"] != "ok" and r.get("reason"), r
                assert_no_figure("latency", r)
    # By default the plan leaves node 1 out and measures node 0 only.
    probe = ok_run(res, "default")
    assert pairs(probe["latency"]) == {(0, 0), (1, 0)}
    for r in probe["latency"]:
        assert_measured("latency", r)


# ----------------------------------------------------------------------- offline CPU


def test_offline_cpu_never_used(two):
    res = two["offline_cpu"]
    assert res.text("cpus_online").strip() == "0-2", res.describe()
    topo = ok_run(res, "topology")
    probe = ok_run(res, "probe")
    for t in (topo, probe["topology"]):
        assert 3 not in {c["id"] for c in t["cpus"]}
        assert all(3 not in n["cpus"] for n in t["nodes"])
        assert 3 not in plan_cpus(t), t["plan"]
    assert 3 not in used_cpus(probe), "offline CPU 3 was used"
    assert pairs(probe["latency"]) == {(c, m) for c in (0, 1) for m in (0, 1)}, "node 1 must still measure from CPU 2"
    for kind in ("latency", "bandwidth", "core_to_core"):
        for r in probe[kind]:
            assert_measured(kind, r)
    # Node 1 streams from its one online CPU.
    peak = assert_peak(res, "peak", {0: {0, 1}, 1: {2}})
    assert {(r["cpu_node"], r["mem_node"]) for r in peak} == {(c, m) for c in (0, 1) for m in (0, 1)}


# ------------------------------------------------------------------------ huge pages


def test_hugetlb_without_pool_fails_cleanly(two):
    res = two["hugepages"]
    assert res.text("pool_before").strip() == "0"
    probe = ok_run(res, "none", want_rc=1)
    assert probe["latency"], "no latency result"
    for r in probe["latency"]:
        assert r["outcome"] != "ok", r
        assert r["reason"] and re.search(r"huge", r["reason"], re.I), f"reason: {r['reason']!r}"
        assert_no_figure("latency", r)


def test_hugetlb_pool_on_one_node(two):
    res = two["hugepages"]
    assert res.text("pool_after").strip() == "8", res.describe()
    probe = ok_run(res, "some", want_rc=1)  # node 0 has no pool
    assert pairs(probe["latency"]) == {(c, m) for c in (0, 1) for m in (0, 1)}
    for r in probe["latency"]:
        if r["mem_node"] == 1:
            assert_measured("latency", r)
            assert r["buffer"]["page_size"] == "2MiB-hugetlb", r["buffer"]
        else:
            assert r["outcome"] != "ok" and r["reason"], r
            assert_no_figure("latency", r)


def test_4k_pages(two):
    probe = ok_run(two["hugepages"], "small")
    for r in probe["latency"]:
        assert_measured("latency", r)
        assert r["buffer"]["page_size"] == "4KiB", r["buffer"]


def test_unit_tests_pass_on_a_multi_node_kernel(two):
    if not GUEST_UNIT_TESTS:
        pytest.skip("no unit-test programs named in NUMAPROBE_GUEST_UNIT_TESTS (the cross build names them)")
    res = two["unit_tests"]
    for program in GUEST_UNIT_TESTS:
        out = res.text(f"{program.name}.out")
        assert res.rc(program.name) == 0, f"{program.name} failed in the guest:\n{out[-4000:]}\n{res.describe()}"
        assert re.search(r"^\[  PASSED  \] \d+ tests?", out, re.M), out[-2000:]
        # What qemu-user could not run must have run here (tests/kernels/numa_syscalls.h).
        assert "does not implement the NUMA system calls" not in out, out[-3000:]


# ---------------------------------------------------------------------------- daemon

METRIC_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text: str) -> list[tuple[str, dict, float]]:
    series = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = METRIC_LINE.match(line)
        if m:
            series.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return series


def daemon_result(boot, name: str, serve_missing) -> vh.ScenarioResult:
    if serve_missing:
        pytest.fail(serve_missing, pytrace=False)
    res = boot[name]
    if res.rc("check_config") != 0:
        pytest.fail("check-config rejects the test config (update SERVE_CONFIG in "
                    "tests/vm/test_vm_numa.py):\n" + res.text("check_config.err")
                    + res.text("check_config.out"), pytrace=False)
    return res


def assert_became_ready(res: vh.ScenarioResult):
    assert "ready" in res.text("_log").splitlines(), \
        f"daemon never became ready:\n{res.text('serve.log')[-3000:]}\n{res.describe()}"


# What a stop may take in the guest. Its own waits (serve/scheduler.cc: the
# scheduler sees the stop within its 50 ms poll and gives a running probe
# 250 ms to notice it before leaving it behind) are guest time, which runs at
# the host's pace however fast the emulator is: they do not scale. The rest
# is work (the probe noticing between samples, joining threads, freeing
# buffers, exiting), which takes as long as the emulator makes it: it is held
# to a reference timed just before in the same guest (stop_serve: the binary
# started, reading the config, planning on the guest and exiting; the mean of
# three runs). Measured in 8 x86-64 and 3 arm64 runs on the 2-CPU machine
# (load average 2-46, with and without two busy loops): stops of 3-106 cs
# (106 in the arm64 guest beside the loops, bound 306) against references of
# 23-240 cs a run. A stop that waited for the round or the next interval
# (seconds) would fail on a quiet machine.
STOP_WAITS_CS = 30
STOP_WORK_PER_REFERENCE = 2
REFERENCE_RUNS = 3


def assert_stopped_cleanly(res: vh.ScenarioResult):
    log = res.text("serve.log")[-3000:]
    assert res.text("serve.rc").strip() == "0", f"daemon exit {res.text('serve.rc').strip()} on SIGTERM:\n{log}"
    took = int(res.text("stop_centiseconds"))
    reference = int(res.text("reference_centiseconds")) / REFERENCE_RUNS
    bound = STOP_WAITS_CS + STOP_WORK_PER_REFERENCE * reference
    print(f"{res.name}: SIGTERM took {took} cs, the reference {reference:.0f} cs a run (bound {bound:.0f} cs)")
    assert took <= bound, (f"SIGTERM took {took} cs, more than {STOP_WAITS_CS} cs + {STOP_WORK_PER_REFERENCE} x "
                           f"the reference's {reference:.0f} cs:\n{log}")


def test_daemon_series_for_every_allowed_pair(four, serve_missing):
    res = daemon_result(four, "serve", serve_missing)
    assert_became_ready(res)
    topo = ok_run(res, "topology")
    series = parse_metrics(res.text("metrics"))
    names = {s[0] for s in series}

    def has(name, **labels):
        return any(n == name and all(l.get(k) == str(v) for k, v in labels.items()) for n, l, _ in series)

    missing = []
    for p in topo["plan"]["memory_pairs"]:
        for name in ("numaprobe_memory_latency_seconds", "numaprobe_memory_bandwidth_bytes_per_second",
                     "numaprobe_numa_distance"):
            if not has(name, cpu_node=p["cpu_node"], mem_node=p["mem_node"]):
                missing.append(f"{name}{{cpu_node={p['cpu_node']},mem_node={p['mem_node']}}}")
    for p in topo["plan"]["c2c_pairs"]:
        if not has("numaprobe_core_to_core_latency_seconds", cpu_a=p["cpu_a"], cpu_b=p["cpu_b"]):
            missing.append(f"numaprobe_core_to_core_latency_seconds{{cpu_a={p['cpu_a']},cpu_b={p['cpu_b']}}}")
    assert not missing, f"missing series: {missing}\nfamilies present: {sorted(names)}"
    assert {p["mem_node"] for p in topo["plan"]["memory_pairs"]} == {0, 1, 2, 3}
    for n, l, _ in series:
        if "cpu_node" in l:
            assert l["cpu_node"] != "3", f"memory-only node 3 as cpu_node: {n}{l}"
    misplaced = [(l, v) for n, l, v in series if n == "numaprobe_placement_failures_total" and v > 0]
    assert not misplaced, f"placement failures in a healthy guest: {misplaced}"
    assert_per_host_summaries_match_their_pairs(series, res)
    assert_peak_schedule(series, topo, res)
    assert_stopped_cleanly(res)


PEAK_PLANNED = re.compile(r"peak_bandwidth: (\d+) runs every 6h ")
PEAK_RUN = re.compile(r"peak (read|write) bandwidth node (\d+) -> node (\d+)")
PEAK_SEARCH = re.compile(r"peak (read|write) bandwidth node (\d+) -> node (\d+): thread search: (\d+) of (\d+) CPUs "
                         r"\(cpus ([\d,]+)\), the count after the first within")


def assert_peak_schedule(series, topo, res: vh.ScenarioResult) -> None:
    """The daemon's peak bandwidth on 4 asymmetric nodes (a memory-only node
    among them): it plans each CPU node's own memory and one remote node per
    firmware distance, read and write, apart from the rounds; every run it
    logged is one of those pairs, and every figure it published streamed from
    the count of its CPU node's CPUs its thread search found, pinned to that
    node's CPUs. Whether the runs finished before the
    guest stopped depends on its speed, so only what ran is judged."""
    distances = {(l["cpu_node"], l["mem_node"]): v for n, l, v in series if n == "numaprobe_numa_distance"}
    expected = set()
    for cpu_node in {c for c, _ in distances}:
        expected.add((cpu_node, cpu_node))
        by_distance = {}
        for (c, m), d in sorted(distances.items(), key=lambda e: int(e[0][1])):
            if c == cpu_node and m != cpu_node:
                by_distance.setdefault(d, m)
        expected |= {(cpu_node, m) for m in by_distance.values()}
    assert len(expected) < len(distances), "fewer pairs than the whole matrix"
    log = res.text("serve.log")
    planned = PEAK_PLANNED.findall(log)
    assert planned and int(planned[0]) == 2 * len(expected), (planned, sorted(expected))
    rounds_line = re.search(r"probe plan: .*runs per round.*", log)
    assert rounds_line and "peak_bandwidth" not in rounds_line.group(0), "peak bandwidth is not in the rounds"
    ran = {(c, m) for _, c, m in PEAK_RUN.findall(log)}
    assert ran <= expected, f"peak runs outside its plan: {sorted(ran - expected)}"
    cpus = {n["id"]: len(n["cpus"]) for n in topo["nodes"]}
    threads = {(l["cpu_node"], l["mem_node"], l["op"]): v for n, l, v in series
               if n == "numaprobe_memory_peak_bandwidth_threads"}
    figures = {(l["cpu_node"], l["mem_node"], l["op"]) for n, l, _ in series
               if n == "numaprobe_memory_peak_bandwidth_bytes_per_second"}
    assert set(threads) == figures
    # Each series' first run searched how many of its node's CPUs reach the
    # peak, pinned to that node's CPUs; its figure streamed from that many.
    node_cpus = {n["id"]: set(n["cpus"]) for n in topo["nodes"]}
    searched = {}
    for op, c, m, found, of, used in PEAK_SEARCH.findall(log):
        used = [int(u) for u in used.split(",")]
        assert int(of) == cpus[int(c)], f"peak {op} {c} -> {m}: searched {of} CPUs, node {c} has {cpus[int(c)]}"
        assert 1 <= int(found) <= int(of) and len(used) == int(found), (op, c, m, found, of, used)
        assert set(used) <= node_cpus[int(c)], f"peak {op} {c} -> {m}: cpus {used} are not all node {c}'s"
        searched[(c, m, op)] = int(found)
    for (c, m, op), v in threads.items():
        assert (c, m) in expected and op in ("read", "write"), (c, m, op)
        assert (c, m, op) in searched, f"peak {op} {c} -> {m} published without a logged thread search"
        assert v == searched[(c, m, op)], f"peak {op} {c} -> {m}: {v} threads, its search found {searched[(c, m, op)]}"
    print(f"peak bandwidth: {len(expected)} pairs planned, {len(ran)} run, {len(searched)} searched, "
          f"{len(figures)} figures published")


def assert_per_host_summaries_match_their_pairs(series, res: vh.ScenarioResult) -> None:
    """The per-host series the alerts read, against the per-pair series of the
    same scrape on this multi-node topology (a memory-only node included):
    each probe's oldest success is the oldest of its pairs' last successes;
    the worst drift, when present, is the worst pair's recent median over its
    baseline (latency the highest, bandwidth per op the lowest), and it is
    present exactly when some pair has both."""
    def values(name, key):
        return {key(l): v for n, l, v in series if n == name}

    last = [(l["probe"], v) for n, l, v in series if n == "numaprobe_probe_last_success_timestamp_seconds"]
    oldest = values("numaprobe_probe_oldest_success_timestamp_seconds", lambda l: l["probe"])
    assert last, "no probe succeeded"
    assert oldest == {p: min(v for q, v in last if q == p) for p, _ in last}, (oldest, last)

    for kind, unit, worst in (("latency", "seconds", max), ("bandwidth", "bytes_per_second", min)):
        def pair(l):
            return (l["cpu_node"], l["mem_node"], l.get("op", ""))
        recent = values(f"numaprobe_memory_{kind}_recent_median_{unit}", pair)
        base = values(f"numaprobe_memory_{kind}_baseline_{unit}", pair)
        expected = {}
        for (c, m, op), r in recent.items():
            if base.get((c, m, op)):
                expected.setdefault(op, []).append(r / base[(c, m, op)])
        got = values(f"numaprobe_memory_{kind}_worst_pair_drift_ratio", lambda l: l.get("op", ""))
        assert set(got) == set(expected), (kind, got, expected)
        for op, ratios in expected.items():
            assert got[op] == pytest.approx(worst(ratios), rel=1e-9), (kind, op, got[op], ratios)
    assert_peer_ratios_match_their_pairs(series, res)


LOST_LATENCY_RUN = re.compile(r'msg="latency cpu (\d+) -> node (\d+): (\w+): ')


def assert_peer_ratios_match_their_pairs(series, res: vh.ScenarioResult) -> None:
    """The peer alert's input against the same scrape: every remote pair
    whose CPU node has a local pair has a remote/local ratio and no other pair
    has one, and its cohort labels are numaprobe_host_info's, the node count
    and distance sum those of the exported SLIT matrix (a memory-only node has
    no local pair and no CPU, so it adds distances but not to numa_nodes).
    A pair gets its ratio once it and its CPU node's local pair have
    PEER_WINDOW figures, one for each successful run (no confirmation runs in
    these scenarios). The guest waited for every ratio or for PEER_ROUNDS
    rounds, each running every pair once (the schedule does not rotate): a
    ratio still missing then is allowed only where the log, up to the scrape,
    shows enough of the pair's latency runs (or its local pair's) lost that
    fewer than PEER_WINDOW figures remained.
    The ratio's value is of the medians of the last 9 figures, which the
    daemon does not export: that it is their ratio is unit-tested
    (Metrics.RemoteLocalRatioOfPeerMediansCarriesTheCohort,
    SeriesHistoryTest.PeerMedianIsOfTheLastNineAndFollowsAConfirmedRise)."""
    recent = {(l["cpu_node"], l["mem_node"]) for n, l, _ in series
              if n == "numaprobe_memory_latency_recent_median_seconds" and "cpu" not in l}
    expected = {(c, m) for c, m in recent if c != m and (c, c) in recent}
    ratios = [(l, v) for n, l, v in series if n == "numaprobe_memory_latency_recent_remote_local_ratio"]
    got = {(l["cpu_node"], l["mem_node"]): v for l, v in ratios}
    assert expected, f"no remote pair has a recent median: {sorted(recent)}"
    assert set(got) <= expected, f"ratios for pairs that must have none: {set(got) - expected}"
    missing = sorted(expected - set(got))
    if missing:
        rounds = next(int(v) for n, _, v in series if n == "numaprobe_rounds_completed_total")
        assert rounds >= PEER_ROUNDS, (f"the guest stopped waiting after {rounds} of {PEER_ROUNDS} rounds with "
                                       f"no ratio for {missing}\n{res.describe()}")
        logged = res.files["serve.log"][:int(res.text("log_bytes_at_scrape"))].decode(errors="replace")
        lost = {}
        for cpu, node, _ in LOST_LATENCY_RUN.findall(logged):
            key = (str(FOUR.cpu_node(int(cpu))), node)
            lost[key] = lost.get(key, 0) + 1
        # Each of `rounds` but the first (the representatives alone) ran every
        # pair; fewer than PEER_WINDOW figures means at least
        # rounds - 1 - PEER_WINDOW + 1 of those runs lost (a lost run logs at
        # least one failure, its retry another).
        unexplained = [(c, m) for c, m in missing
                       if max(lost.get((c, m), 0), lost.get((c, c), 0)) < rounds - PEER_WINDOW]
        assert not unexplained, (f"after {rounds} rounds no ratio for {unexplained}, and the log shows too few of "
                                 f"their latency runs lost: {lost}")
        print(f"{len(missing)} of {len(expected)} remote pairs without a ratio after {rounds} rounds, each with "
              f"its lost runs logged: {lost}")
    assert all(v > 0 for v in got.values()), got
    distances = [v for n, l, v in series if n == "numaprobe_numa_distance"]
    cohort = {"numa_nodes": str(sum(1 for d in distances if d == 10)),
              "numa_distance_sum": str(int(sum(distances)))}
    host = [l for n, l, _ in series if n == "numaprobe_host_info"]
    assert len(host) == 1 and {k: host[0][k] for k in cohort} == cohort, (host, cohort)
    for l, _ in ratios:
        assert {k: l[k] for k in ("cpu_model", *cohort)} == {"cpu_model": host[0]["cpu_model"], **cohort}, l


def test_daemon_keeps_a_recording_across_a_restart(four, serve_missing):
    """Stopped in the middle of recording its baselines and started again on
    the same state directory, the daemon goes on with the recording: the same
    start, and no fewer figures than its state file kept (results model,
    state.json format 2). Structure only."""
    res = daemon_result(four, "serve_restart", serve_missing)

    def scalars(name: str) -> dict:
        """The scrape's unlabelled series, and numaprobe_baseline_series by state."""
        out = {}
        for n, l, v in parse_metrics(res.text(name)):
            if n == "numaprobe_baseline_series":
                out[f"{n}{{{l['state']}}}"] = v
            elif not l:
                out[n] = v
        return out

    before, after = scalars("metrics_before"), scalars("metrics_after")
    log = res.text("serve.log")[-3000:]
    assert before.get("numaprobe_rounds_completed_total", 0) >= 3, res.describe()
    state = json.loads(res.text("state.json"))
    assert state["format"] == 2, state.get("format")
    series = state["series"]
    assert series and all("recording" in s and "baseline" not in s for s in series), series[:3]
    kept = sum(len(s["recording"]) for s in series)
    assert kept >= 2 * len(series), f"{kept} figures kept for {len(series)} series after 3 rounds"
    assert before["numaprobe_baseline_series{recording}"] == len(series) == after["numaprobe_baseline_series{recording}"]
    assert after["numaprobe_baseline_series{armed}"] == 0
    since = "numaprobe_baseline_recording_since_timestamp_seconds"
    # The exposition prints seconds to microseconds, the state file to full double precision.
    first = min(s["recording_since"] for s in series)
    assert after[since] == before[since] == pytest.approx(first, abs=1e-3), (before[since], after[since], first)
    assert after["numaprobe_baseline_recording_progress_ratio"] >= kept / (20 * len(series)) > 0, \
        (after["numaprobe_baseline_recording_progress_ratio"], kept)
    assert f"restored the state of {len(series)} series (0 baselines armed)" in res.text("serve.log"), log
    assert "recording a baseline of every series" not in res.text("serve.log"), "the recording started over:\n" + log


def test_daemon_cpuset_mems_shrinks_at_runtime(two, serve_missing):
    res = daemon_result(two, "serve_mems", serve_missing)
    assert_became_ready(res)
    assert res.text("mems_effective").strip() == "0"
    before = parse_metrics(res.text("metrics_before"))
    assert any(n == "numaprobe_memory_latency_seconds" and l.get("mem_node") == "1" for n, l, _ in before), \
        "node 1 was never measured before the cpuset change"
    after = parse_metrics(res.text("metrics_after"))
    log = "daemon log:\n" + res.text("serve.log")[-2000:]
    stale = [f"{n}{l}" for n, l, _ in after if n == "numaprobe_memory_latency_seconds" and l.get("mem_node") == "1"]
    assert not stale, f"latency still published for node 1 after cpuset.mems=0: {stale}\n{log}"
    failures = sum(v for n, l, v in after
                   if n == "numaprobe_placement_failures_total" and l.get("mem_node") == "1")
    assert failures > 0, f"no numaprobe_placement_failures_total{{mem_node=\"1\"}} > 0 after cpuset.mems=0\n{log}"
    assert_stopped_cleanly(res)


# ------------------------------------------------------------ rotation, worked out
#
# The rule rotation.h states, written out here from the plan, the firmware
# distances and the fixed task costs, so that the daemon's schedule in the
# guest can be checked against it run by run.

@dataclasses.dataclass(frozen=True)
class Task:
    """One probe run of a round (serve/round_tasks.h). For core-to-core, `cpu`
    and `peer` are the pair's CPUs and `mem_node` the node of its line."""
    kind: str
    cpu: int
    cpu_node: int
    mem_node: int
    peer: int = -1
    relation: str = ""

    def describe(self) -> str:
        """How the daemon's log names the run (ProbeKind::Describe)."""
        if self.kind == "core_to_core":
            return f"core-to-core cpu {self.cpu} <-> cpu {self.peer}"
        prefix = "read bandwidth" if self.kind == "bandwidth" else self.kind
        return f"{prefix} cpu {self.cpu} -> node {self.mem_node}"


def round_tasks(plan: dict, vm: vh.VmTopology) -> list[Task]:
    """RoundTasks for SERVE_CONFIG (latency, read bandwidth, core-to-core): each
    kind's targets in plan order, stably sorted by memory node."""
    memory = plan["memory_pairs"]
    tasks = []
    for kind in ("latency", "bandwidth"):
        tasks += sorted((Task(kind, p["cpu"], p["cpu_node"], p["mem_node"]) for p in memory),
                        key=lambda t: t.mem_node)
    tasks += sorted((Task("core_to_core", p["cpu_a"], vm.cpu_node(p["cpu_a"]), p["line_node"], p["cpu_b"],
                          p["relation"]) for p in plan["c2c_pairs"]), key=lambda t: t.mem_node)
    return tasks


def shares_buffers(a: Task, b: Task) -> bool:
    return a.kind == b.kind and a.mem_node == b.mem_node


def representative_nodes(tasks: list[Task], vm: vh.VmTopology) -> dict:
    """Per kind, the memory node each class's representative measures: as few
    nodes as cover every class, greedily, the lowest node on a tie."""
    classes = {}  # (kind, distance, relation) -> memory nodes
    for t in tasks:
        classes.setdefault((t.kind, vm.distance(t.cpu_node, t.mem_node), t.relation), set()).add(t.mem_node)
    chosen = {}
    for kind in {k[0] for k in classes}:
        left = {k: nodes for k, nodes in classes.items() if k[0] == kind}
        while left:
            covers = {}
            for nodes in left.values():
                for n in nodes:
                    covers[n] = covers.get(n, 0) + 1
            best = min(covers, key=lambda n: (-covers[n], n))
            for k in [k for k, nodes in left.items() if best in nodes]:
                chosen[k] = best
                del left[k]
    return chosen


def split_round(tasks: list[Task], vm: vh.VmTopology) -> tuple[list[int], list[list[int]]]:
    """SplitRound: each class's (kind, node distance, CPU relation) first task
    on the memory node chosen for it runs every round, with the other variants
    of its pair; the rest rotate in whole visits (consecutive tasks that share
    buffers)."""
    node_of = representative_nodes(tasks, vm)
    first, every, rotated = {}, [], []
    for i, t in enumerate(tasks):
        key = (t.kind, vm.distance(t.cpu_node, t.mem_node), t.relation)
        if key not in first and t.mem_node == node_of[key]:
            first[key] = i
        r = tasks[first[key]] if key in first else None
        if r and (r.kind, r.cpu, r.cpu_node, r.mem_node, r.peer) == (t.kind, t.cpu, t.cpu_node, t.mem_node, t.peer):
            every.append(i)
        elif rotated and rotated[-1][-1] == i - 1 and shares_buffers(tasks[i - 1], t):
            rotated[-1].append(i)
        else:
            rotated.append([i])
    return every, rotated


def cost_of(tasks: list[Task], which: list[int], costs: dict) -> float:
    """TaskCostEstimate::Of: a task that starts a visit costs its kind's
    visit_start, one continuing it its continuation (or visit_start)."""
    total = 0.0
    for k, i in enumerate(which):
        kind = costs[tasks[i].kind]
        starts = k == 0 or not shares_buffers(tasks[which[k - 1]], tasks[i])
        total += kind["visit_start"] if starts else kind.get("continuation", kind["visit_start"])
    return total


def rotation_rounds(tasks, every, rotated, costs, budget_cpu_s: float) -> int:
    """RotationRounds: 1 unless a full round costs more than kRotateAbove (2)
    budgets; else enough rounds for the rotated visits to fit what the
    representatives leave of two budgets (at least one), at most a visit a round."""
    full = cost_of(tasks, list(range(len(tasks))), costs)
    if not rotated or full <= 2 * budget_cpu_s:
        return 1
    room = max(2 * budget_cpu_s - cost_of(tasks, every, costs), budget_cpu_s)
    rest = sum(cost_of(tasks, visit, costs) for visit in rotated)
    return min(max(math.ceil(rest / room), 1), len(rotated))


def round_of_cycle(tasks, every, rotated, rounds: int, index: int) -> list[Task]:
    """RoundOfCycle: the representatives and the index-th contiguous slice of
    the rotated visits, in round order."""
    n = len(rotated)
    which = every + [i for visit in rotated[index * n // rounds:(index + 1) * n // rounds] for i in visit]
    return [tasks[i] for i in sorted(which)]


STARTING = re.compile(r'msg="starting (latency cpu \d+ -> node \d+|read bandwidth cpu \d+ -> node \d+'
                      r'|core-to-core cpu \d+ <-> cpu \d+)"')
SCHEDULE = re.compile(r'msg="schedule: (\d+) tasks; (\d+) every round .*?, (\d+) in rotation over (\d+) rounds: '
                      r'([^(]*) \(a full round costs ([0-9.]+) CPU-s')


def test_daemon_rotates_pairs_when_a_full_round_exceeds_the_budget(four, serve_missing):
    """Rotation forced by fixed task costs (ROTATION_COSTS): the daemon must
    announce exactly the rotation worked out here from the plan, QEMU's SLIT
    and those costs, and then run exactly its rounds, in order: the
    representatives alone first (the first round after a start), then cycle
    after cycle, one pair per probe kind and node distance (and CPU relation)
    every round, every other pair in whole visits once a cycle. Structure only: the
    guest's speed changes how long a round takes, never which tasks it runs.
    A retried disturbed run is beyond the schedule: logged as such, it is not
    part of it (and figures beyond their band earn no confirmation runs here:
    NUMAPROBE_TEST_CONFIRMATIONS=off)."""
    if foreign_guest():
        pytest.skip("rotation is architecture-independent scheduling, run in the x86-64 guest only")
    res = daemon_result(four, "serve_rotation", serve_missing)
    log = res.text("serve.log")
    assert_became_ready(res)
    plan = ok_run(res, "topology")["plan"]
    tasks = round_tasks(plan, FOUR)
    every, rotated = split_round(tasks, FOUR)
    budget = 0.5 * 1.0  # SERVE_CONFIG: duty_cycle x interval
    full = cost_of(tasks, list(range(len(tasks))), ROTATION_COSTS)
    rounds = rotation_rounds(tasks, every, rotated, ROTATION_COSTS, budget)
    # The same by hand, so that the working-out above is checked too: 12
    # memory pairs and 7 core-to-core pairs (31 tasks); representatives 5 + 5
    # (distances 10, 12, 32, 20, 40) + 4 core-to-core classes; the rest 7 + 7
    # + 3 in 8 visits (nodes 1, 2 and 3's pair (1, 3) of each memory kind, and
    # the 3 core-to-core pairs in 2: the representatives' line nodes are chosen
    # to cover the classes from as few nodes as possible, which leaves two of
    # the others next to each other on one line node). A full round costs
    # 4 visits x (0.1 + 2 x 0.05) x 2 kinds + 7 x 0.05 = 1.95 CPU-s > 2 x 0.5;
    # the representatives 0.9, so each round has room for 0.5 of the rotated
    # 1.15: 3 rounds, of 2, 3 and 3 visits.
    assert (len(tasks), len(every), len(rotated), sum(map(len, rotated))) == (31, 14, 8, 17), (every, rotated)
    assert (round(full, 6), rounds) == (1.95, 3)
    cycle = [round_of_cycle(tasks, every, rotated, rounds, r) for r in range(rounds)]

    # Announced once, from the first round on, in the words of a start.
    schedules = SCHEDULE.findall(log)
    assert [s[:4] for s in schedules] == [(str(len(tasks)), str(len(every)), str(len(tasks) - len(every)),
                                           str(rounds))], f"{schedules}\n{log[-3000:]}"
    assert schedules[0][4] == "starting to rotate" and schedules[0][5] == f"{full:.2f}", schedules
    assert "rotation stopped" not in log and "number of rounds changed" not in log, log[-3000:]
    metrics = {(n, tuple(sorted(l.items()))): v for n, l, v in parse_metrics(res.text("metrics"))}
    assert metrics[("numaprobe_rotation_rounds", ())] == rounds
    assert metrics[("numaprobe_refresh_interval_seconds", ())] >= rounds * 1.0, "a rotated series refreshes once a cycle"

    # Run by run: the scheduled runs after the announcement, cut into rounds
    # where the round's first task (always a representative) starts.
    started = STARTING.findall(log.split('msg="schedule: ', 1)[1])
    head = tasks[0].describe()
    assert started and started[0] == head, started[:5]
    ran, current = [], []
    for what in started:
        if what == head and current:
            ran.append(current)
            current = []
        current.append(what)
    ran.append(current)  # the last round, maybe cut short by the stop
    completed = int(metrics[("numaprobe_rounds_completed_total", ())])
    assert len(ran) >= completed >= 1 + 2 * rounds, f"{len(ran)} rounds logged, {completed} completed"
    representatives = [tasks[i].describe() for i in every]
    for r, got in enumerate(ran):
        want = representatives if r == 0 else [t.describe() for t in cycle[(r - 1) % rounds]]
        if r + 1 < len(ran):
            assert got == want, f"round {r} ran\n{got}\ninstead of\n{want}"
        else:
            assert got == want[:len(got)], f"last round {r} ran\n{got}\nwhich does not begin\n{want}"
    assert_stopped_cleanly(res)
