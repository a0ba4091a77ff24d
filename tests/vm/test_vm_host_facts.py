# SPDX-License-Identifier: Apache-2.0
"""Host facts and firmware-advertised figures on a real kernel: one QEMU guest
with an ACPI HMAT (`-machine hmat=on` and `-numa hmat-lb` values chosen here)
and a CPU-less memory node whose attached initiator is node 1.

  * The kernel's sysfs HMAT files, `numaprobe probe --format json` and the
    daemon's /metrics must all carry exactly the values given to QEMU.
  * While the daemon runs, the guest switches transparent huge pages and
    kernel.numa_balancing and grows node 1's hugepage pool: each must be a
    host change event on /metrics within a round, without a restart.

Structure only, never timings: under emulation the measured figures mean
nothing, so ratios are checked against the same run's measured figure.
"""

from __future__ import annotations

import re

import pytest

import vmharness as vh
from test_vm_numa import SERVE_ADDRESS, serve_helpers, serve_status, unavailable

# Node 2 holds memory and no CPUs (a CXL-like expander); its attached initiator is node 1.
HMAT_LB = tuple(vh.HmatLb(i, t, lat, bw) for i, t, lat, bw in (
    (0, 0, 11, 20480), (0, 1, 23, 10240), (0, 2, 41, 6144),
    (1, 0, 24, 9216), (1, 1, 13, 19456), (1, 2, 37, 7168)))
TOPOLOGY = vh.VmTopology(
    "hmat_cxl",
    (vh.VmNode(2, 320), vh.VmNode(2, 320), vh.VmNode(0, 256, initiator=1)),
    {(0, 1): 21, (0, 2): 30, (1, 2): 25},
    hmat=HMAT_LB)
ADVERTISED = {lb.target: lb for lb in HMAT_LB if lb.initiator == TOPOLOGY.initiator_of(lb.target)}
HUGEPAGES_NODE1 = "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"

# Latency only (TCG is slow), from every CPU node to every memory node. The
# daemon's baseline waits for a round without a failed run, and the HMAT
# ratios need a figure of every measured pair, so no run may come out
# coarse_clock: with 20000 loads a sample (lengthened, if it must be, to 100
# steps of the guest's ~0.8 us clock, within the run's cap of 9 x 20000 loads)
# is resolved unless an emulated load takes under about 2 ns. It takes
# 140-500 ns under TCG here; the probe scenarios of test_vm_numa.py use 2000
# loads and accept either outcome.
CHASE = "--latency-buffer 4MiB --samples 3 --loads 20000"
CONFIG = """\
probes:
  latency: {enabled: true, buffer_size: 4MiB, samples: 3, loads_per_sample: 20000}
  bandwidth: {enabled: false, buffer_size: 4MiB, burst_size: 1MiB, bursts: 2}
  core_to_core: {enabled: false}
schedule: {duty_cycle: 0.5, interval: 1s, jitter: 0}
memory: {budget: 64MiB, pages: auto}
baseline: {rounds: 1}
state_directory: /tmp/numaprobe-facts
"""

SCENARIO = vh.Scenario("host_facts", serve_helpers(CONFIG) + f"""
for f in /sys/devices/system/node/node*/access*/initiators/*; do
  echo "$f $(cat $f 2>/dev/null)"
done >"$OUT/hmat_sysfs"
run probe numaprobe probe --format json --tests latency {CHASE}
run probe_table numaprobe probe --tests latency {CHASE}
save balancing_before /proc/sys/kernel/numa_balancing
start_serve
if wait_for http://{SERVE_ADDRESS}/-/ready 120; then note "ready"; else note "never ready"; fi
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics_before
  grep -q '^numaprobe_baseline_complete 1' "$OUT/metrics_before" && break
  sleep 1; i=$((i + 1))
done
note "baseline complete after $i s"
# The log's length before the first setting changes and after the last one
# has (the pool grows a page at a time while `echo 8` runs): what the daemon
# logged between them and the change lines shows how many rounds it took to
# see them (test_runtime_changes_are_change_events_within_a_round).
wc -c <"$OUT/serve.log" >"$OUT/log_bytes_before_flip"
date +%s >"$OUT/flipping_at"
echo never >/sys/kernel/mm/transparent_hugepage/enabled
echo $((1 - $(cat /proc/sys/kernel/numa_balancing))) >/proc/sys/kernel/numa_balancing
echo 8 >{HUGEPAGES_NODE1}
wc -c <"$OUT/serve.log" >"$OUT/log_bytes_after_flip"
since=$(rounds_now metrics_at_flip)
save balancing_after /proc/sys/kernel/numa_balancing
save pool_after {HUGEPAGES_NODE1}
# Until the three changes are on /metrics, or two rounds have ended since
# the settings changed (the one under way, and one begun after: it read the
# facts first), whichever comes first: not a number of seconds.
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics_after
  if grep -q 'field="thp_enabled"' "$OUT/metrics_after" && grep -q 'field="numa_balancing"' "$OUT/metrics_after" &&
     grep -q 'after="8",before="[0-9]*",field="node1.hugepages_2048kB"' "$OUT/metrics_after"; then break; fi
  [ "$(metric numaprobe_rounds_completed_total "$OUT/metrics_after")" -ge $((${{since:-0}} + 2)) ] && break
  sleep 1; i=$((i + 1))
done
date +%s >"$OUT/seen_at"
timeout 15 wget -q -O "$OUT/landing.html" http://{SERVE_ADDRESS}/
stop_serve
""", timeout=300)


@pytest.fixture(scope="module")
def guest():
    missing = serve_status()
    if missing:
        pytest.skip(missing)
    try:
        return vh.boot(TOPOLOGY, [SCENARIO])["host_facts"]
    except vh.HarnessUnavailable as e:
        unavailable(str(e))


def samples(text: str, name: str) -> list[tuple[dict, float]]:
    out = []
    for line in text.splitlines():
        m = re.match(r"^" + name + r"\{(.*)\} (\S+)$", line)
        if m:
            out.append((dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))), float(m.group(2))))
    return out


def test_kernel_exposes_the_chosen_hmat_values(guest):
    sysfs = guest.text("hmat_sysfs")
    for target, lb in ADVERTISED.items():
        for access in (0, 1):  # the attached initiator has CPUs: the CPU class says the same
            base = f"/sys/devices/system/node/node{target}/access{access}/initiators"
            for f, want in (("read_latency", lb.latency_ns), ("write_latency", lb.latency_ns),
                            ("read_bandwidth", lb.bandwidth_mib), ("write_bandwidth", lb.bandwidth_mib)):
                assert f"{base}/{f} {want}" in sysfs.splitlines(), f"{base}/{f} != {want}:\n{sysfs}"
            assert f"{base}/node{lb.initiator} " in sysfs.splitlines(), f"initiator node{lb.initiator} not linked"


def test_daemon_exports_the_hmat_values_exactly(guest):
    metrics = guest.text("metrics_after")
    latency = {(l["mem_node"], l["initiator_class"], l["op"]): v
               for l, v in samples(metrics, "numaprobe_hmat_latency_seconds")}
    bandwidth = {(l["mem_node"], l["initiator_class"], l["op"]): v
                 for l, v in samples(metrics, "numaprobe_hmat_bandwidth_bytes_per_second")}
    want_latency, want_bandwidth = {}, {}
    for target, lb in ADVERTISED.items():
        for cls in ("any", "cpu"):
            for op in ("read", "write"):
                want_latency[(str(target), cls, op)] = lb.latency_ns * 1e-9
                want_bandwidth[(str(target), cls, op)] = float(lb.bandwidth_mib * 2**20)
    assert latency == pytest.approx(want_latency, rel=1e-12), guest.describe()
    assert bandwidth == want_bandwidth
    initiators = {(l["mem_node"], l["initiator_class"]): l["initiator_nodes"]
                  for l, _ in samples(metrics, "numaprobe_hmat_initiators_info")}
    assert initiators[("2", "any")] == "1" and initiators[("2", "cpu")] == "1"
    # Ratios only for measured pairs whose CPU node the firmware advertises for.
    measured = {(l["cpu_node"], l["mem_node"]): v for l, v in samples(metrics, "numaprobe_memory_latency_seconds")}
    ratios = {(l["cpu_node"], l["mem_node"]): v for l, v in samples(metrics, "numaprobe_memory_latency_hmat_ratio")}
    assert set(ratios) == {("0", "0"), ("1", "1"), ("1", "2")}, ratios
    for (cpu_node, mem_node), ratio in ratios.items():
        assert ratio == pytest.approx(measured[(cpu_node, mem_node)] / (ADVERTISED[int(mem_node)].latency_ns * 1e-9),
                                      rel=1e-6)
    # Latency only here (TCG is slow): the bandwidth ratios follow the same
    # pairing, checked by tests/daemon/hmat_test.cc.
    assert "Advertised by the firmware (ACPI HMAT" in guest.text("landing.html")


def test_probe_prints_the_hmat_beside_the_matrix(guest):
    assert guest.rc("probe") == 0, guest.text("probe.err")[-3000:]
    report = guest.json("probe")
    targets = {(t["mem_node"], t["initiator_class"]): t for t in report["hmat"]["targets"]}
    assert set(targets) == {(n, c) for n in range(3) for c in ("any", "cpu")}
    cxl = targets[(2, "cpu")]
    assert cxl["initiators"] == [1]
    assert cxl["read_latency_seconds"] == pytest.approx(37e-9, rel=1e-12)
    assert cxl["read_bandwidth_bytes_per_second"] == 7168 * 2**20
    assert {(m["cpu_node"], m["mem_node"]) for m in report["hmat"]["measured"]} == {(0, 0), (1, 1), (1, 2)}
    table = guest.text("probe_table.out")
    assert "Advertised by the firmware (ACPI HMAT" in table and "node 2 (cpu: 1)" in table, table
    assert "Measured / advertised (ACPI HMAT)" in table


def test_runtime_changes_are_change_events_within_a_round(guest):
    before = guest.text("metrics_before")
    after = guest.text("metrics_after")
    assert "numaprobe_baseline_complete 1" in before.splitlines(), guest.describe()
    old_balancing = guest.text("balancing_before").strip()
    new_balancing = guest.text("balancing_after").strip()
    assert old_balancing != new_balancing, "the guest could not switch kernel.numa_balancing"
    assert guest.text("pool_after").strip() == "8", "node 1's pool did not grow"
    changes = sorted(((l["field"], v, l["before"], l["after"])
                      for l, v in samples(after, "numaprobe_host_change_timestamp_seconds")),
                     key=lambda c: c[1])
    events = {field: (before_value, after_value, when) for field, when, before_value, after_value in changes}
    assert "thp_enabled" in events and events["thp_enabled"][1] == "never", events
    assert events["numa_balancing"][:2] == (old_balancing, new_balancing), events
    # The kernel grows a pool a page at a time and nr_hugepages counts up while
    # `echo 8` runs, so a round that reads it mid-growth logs a step (0 -> 7)
    # and the next round the rest (7 -> 8). The log's steps must chain from 0
    # to 8; the metric keeps the last step of a field.
    log = guest.text("serve.log")
    pool_steps = re.findall(r"host node1\.hugepages_2048kB changed: (\S+) -> (\S+);", log)
    assert pool_steps and pool_steps[0][0] == "0" and pool_steps[-1][1] == "8", (pool_steps, log[-3000:])
    assert all(pool_steps[i][1] == pool_steps[i + 1][0] for i in range(len(pool_steps) - 1)), pool_steps
    assert events["node1.hugepages_2048kB"][:2] == pool_steps[-1], (events, pool_steps)
    flipping, seen = int(guest.text("flipping_at")), int(guest.text("seen_at"))
    for field, when, _, _ in changes:
        if field in ("thp_enabled", "numa_balancing", "node1.hugepages_2048kB"):
            assert flipping - 1 <= when <= seen + 1, (field, when, flipping, seen)
    # Within a round: the round under way when the settings changed, and the
    # next one, which reads the facts before its first probe. In the log: the
    # line of each field's last change comes at most one round start (the
    # round's first run) after the last setting was written.
    before_flip, after_flip = int(guest.text("log_bytes_before_flip")), int(guest.text("log_bytes_after_flip"))
    log = guest.files["serve.log"].decode("latin-1")  # one character a byte, as wc -c counted
    starts = re.findall(r'msg="starting (latency cpu \d+ -> node \d+)"', log)
    assert starts, log[-3000:]
    round_start = f'msg="starting {starts[0]}"'
    for field, value in (("thp_enabled", "never"), ("numa_balancing", new_balancing),
                         ("node1.hugepages_2048kB", "8")):
        lines = [m.start() for m in re.finditer(rf"host {re.escape(field)} changed: \S+ -> (\S+);", log)]
        assert lines and lines[0] >= before_flip, (field, lines, before_flip, log[-3000:])
        last = lines[-1]
        assert re.match(rf"host {re.escape(field)} changed: \S+ -> {re.escape(value)};", log[last:]), log[last:last + 300]
        rounds_begun = log.count(round_start, after_flip, last) if last > after_flip else 0
        assert rounds_begun <= 1, (f"{field}: {rounds_begun} rounds began after the change and before the daemon saw "
                                   f"it:\n{log[after_flip:last + 300]}")
    assert 'numaprobe_host_fact_info{field="thp_enabled",value="never"} 1' in after.splitlines()
    assert 'numaprobe_node_hugepages{node="1",page_size="2048kB"} 8' in after.splitlines()
    assert "numaprobe_baseline_complete 1" in after.splitlines(), "host changes keep the baseline"
    assert "host thp_enabled changed" in log, log[-3000:]
    assert guest.text("serve.rc").strip() == "0", log[-3000:]
