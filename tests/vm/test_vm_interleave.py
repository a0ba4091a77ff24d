# SPDX-License-Identifier: Apache-2.0
"""The kernel's own interleave weights against numaprobe's, on a real kernel:
one QEMU guest booted with Debian 13's backported kernel (Linux 7.x:
weighted_interleave/auto, 6.16 and later) and an ACPI HMAT whose bandwidths
differ per node and, for nodes 1 and 2, between read and write, with a
CPU-less node 2 attached to node 1.

  * With `auto` true the kernel set weighted_interleave/nodeN itself from the
    HMAT: each weight must be the kernel's rule (kernel_auto_weights, written
    here from the rule, not from numaprobe's code) applied to the figures
    given to QEMU.
  * numaprobe's `kernel` vector (sysfs, in use) and its `firmware` vector (its
    own reduction of the HMAT as sysfs shows it) must both be those weights:
    in `numaprobe probe --format json` and on the daemon's /metrics.
  * After the guest writes one node's weight, `auto` reads false, the
    daemon's host fact and the kernel vector follow, the firmware vector stays.
  * numaprobe's interleave_bandwidth kind allocates with
    MPOL_WEIGHTED_INTERLEAVE under the auto weights and then the hand-set
    ones: the page split it reports is those weights, page by page.

Structure only, never timings: the vectors numaprobe builds from measured
peak bandwidth (TCG's figures, meaningless) are only checked to exist
exactly where their figures do. One CPU per CPU node: a single-thread peak
run has no burst barrier for the emulator's vCPU switching to miss.
"""

from __future__ import annotations

import functools
import math
import re

import pytest

import vmharness as vh
from test_vm_host_facts import samples
from test_vm_numa import SERVE_ADDRESS, assert_peak, serve_helpers, serve_status, unavailable

# initiator, target, latency ns, read and write bandwidth MiB/s. Each memory
# node's attached initiator is the node itself, node 2's is node 1 (QEMU's
# initiator=), so the kernel's CPU class (access1) of node N holds the pair
# (initiator_of(N), N); the remote pairs are there to be ignored.
HMAT_LB = tuple(vh.HmatLb(i, t, lat, read, write) for i, t, lat, read, write in (
    (0, 0, 11, 20480, 22528), (0, 1, 23, 9216, 9216), (0, 2, 41, 3072, 3072),
    (1, 0, 24, 9216, 9216), (1, 1, 13, 10240, 12288), (1, 2, 37, 6144, 4096)))
TOPOLOGY = vh.VmTopology(
    "hmat_weights",
    (vh.VmNode(1, 320), vh.VmNode(1, 320), vh.VmNode(0, 256, initiator=1)),
    {(0, 1): 21, (0, 2): 30, (1, 2): 25},
    hmat=HMAT_LB)
CPU_CLASS = {lb.target: lb for lb in HMAT_LB if lb.initiator == TOPOLOGY.initiator_of(lb.target)}
KERNEL_VARIANT = "amd64-backports"
WEIGHTS = "/sys/kernel/mm/mempolicy/weighted_interleave"
# The weight the guest writes by hand: differs from what auto sets there.
MANUAL_NODE, MANUAL_WEIGHT = 1, 5


def kernel_auto_weights(mib_per_second: dict[int, int]) -> dict[int, int]:
    """Linux's auto mode (mm/mempolicy.c reduce_interleave_weights, 6.16):
    over the nodes with memory, floor(32 * bw / sum of bw) where that is at
    least 1, else 1 (also for a node without a figure, bw 0), then every
    weight divided by the greatest common divisor of all."""
    total = sum(mib_per_second.values())
    raw = {node: 32 * bw // total if bw and 32 * bw > total else 1 for node, bw in mib_per_second.items()}
    divisor = functools.reduce(math.gcd, raw.values())
    return {node: w // divisor for node, w in raw.items()}


# Per node min(read, write) of its CPU class: 20480, 10240 (the read), 4096
# (the write); 32 x each / 34816 gives 18, 9 and 3, divided by 3. A rule that
# rounded (19:9:4), kept the read (17:8:5) or skipped the divisor (18:9:3)
# would give another vector.
EXPECTED = kernel_auto_weights({n: min(lb.read_write_mib) for n, lb in CPU_CLASS.items()})
assert EXPECTED == {0: 6, 1: 3, 2: 1}, EXPECTED
assert EXPECTED[MANUAL_NODE] != MANUAL_WEIGHT
MANUAL = {**EXPECTED, MANUAL_NODE: MANUAL_WEIGHT}

# Peak bandwidth alone (the interleave vectors appear beside its figures),
# small buffers; bursts of 1 MiB so that a burst spans many steps of the
# guest's ~1 us clock. The daemon also needs a kind in its rounds, whose
# start reads the host facts: latency, small chases (its outcomes are not
# checked here).
PEAK = "--bandwidth-buffer 4MiB --peak-burst 1MiB --bursts 2"
# The interleave kind beside it, on base pages: 1024 pages of a 4 MiB buffer
# are 100 cycles of the weights (W = 10), so the split is checked page by
# page, not by a few huge pages.
SPLIT = PEAK + " --pages 4k"
CONFIG = """\
probes:
  latency: {enabled: true, buffer_size: 4MiB, samples: 3, loads_per_sample: 2000}
  bandwidth: {enabled: false, buffer_size: 4MiB, burst_size: 1MiB, bursts: 2}
  core_to_core: {enabled: false}
  peak_bandwidth: {enabled: true, max_busy: 1, duty_cycle: 0.5, buffer_size: 4MiB, burst_size: 1MiB, bursts: 2}
schedule: {duty_cycle: 0.5, interval: 1s, jitter: 0}
memory: {budget: 64MiB, pages: auto}
baseline: {rounds: 1}
state_directory: /tmp/numaprobe-interleave
"""
# What the scenario waits for on /metrics: a CPU node's kernel weight of MANUAL_NODE.
KERNEL_SERIES = f'numaprobe_interleave_weight{{cpu_node="[0-9]*",mem_node="{MANUAL_NODE}",source="kernel"}}'

SCENARIO = vh.Scenario("interleave", serve_helpers(CONFIG) + f"""
# weights NAME: auto and every node's weight -> $OUT/NAME
weights() {{
  {{ echo "auto $(cat {WEIGHTS}/auto)"
    for f in {WEIGHTS}/node*; do echo "$(basename $f) $(cat $f)"; done; }} >"$OUT/$1" 2>&1
}}
for f in /sys/devices/system/node/node*/access1/initiators/*_bandwidth; do
  echo "$f $(cat $f 2>/dev/null)"
done >"$OUT/hmat_sysfs"
weights wi_boot
run probe_auto numaprobe probe --format json --tests peak_bandwidth {PEAK}
run split_auto numaprobe probe --format json --tests peak_bandwidth,interleave_bandwidth {SPLIT}
start_serve
if wait_for http://{SERVE_ADDRESS}/-/ready 120; then note "ready"; else note "never ready"; fi
# Until a CPU node has the kernel's weights on /metrics (the daemon's peak
# cycle has a figure of it), or 30 rounds have ended.
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics_auto
  grep -q '^{KERNEL_SERIES} ' "$OUT/metrics_auto" && break
  [ "$(metric numaprobe_rounds_completed_total "$OUT/metrics_auto")" -ge 30 ] 2>/dev/null && break
  sleep 1; i=$((i + 1))
done
weights wi_before_write
echo {MANUAL_WEIGHT} >{WEIGHTS}/node{MANUAL_NODE}
weights wi_manual
since=$(rounds_now metrics_at_write)
# Until the kernel series shows the new weight, or two rounds have ended
# since the write (the next round reads the facts before its first run).
i=0
while [ $i -lt 120 ] && kill -0 $SERVE_PID 2>/dev/null; do
  scrape metrics_manual
  grep -q '^{KERNEL_SERIES} {MANUAL_WEIGHT}$' "$OUT/metrics_manual" && break
  [ "$(metric numaprobe_rounds_completed_total "$OUT/metrics_manual")" -ge $((${{since:-0}} + 2)) ] && break
  sleep 1; i=$((i + 1))
done
stop_serve
run probe_manual numaprobe probe --format json --tests peak_bandwidth {PEAK}
run split_manual numaprobe probe --format json --tests peak_bandwidth,interleave_bandwidth {SPLIT}
""", timeout=300)


@pytest.fixture(scope="module")
def guest():
    missing = serve_status()
    if missing:
        pytest.skip(missing)
    try:
        boot = vh.boot(TOPOLOGY, [SCENARIO], kernel_variant=KERNEL_VARIANT)
    except vh.HarnessUnavailable as e:
        unavailable(str(e))
    release = re.search(r"numaprobe-vm: guest up, kernel (\S+),", boot.console)
    print(f"guest kernel {release.group(1) if release else '?'}, {boot.seconds:.0f} s")
    return boot["interleave"]


def sysfs_weights(guest, name: str) -> tuple[str, dict[int, int]]:
    """(auto as the kernel prints it, node -> weight) of a `weights` step."""
    auto, weights = None, {}
    for line in guest.text(name).splitlines():
        key, _, value = line.partition(" ")
        if key == "auto":
            auto = value
        elif re.fullmatch(r"node\d+", key):
            weights[int(key.removeprefix("node"))] = int(value)
        else:
            raise AssertionError(f"{name}: unexpected line {line!r}\n{guest.text(name)}")
    return auto, weights


def is_true(text: str) -> bool:
    """`auto` as the kernel prints it (true/false; Y/N and 1/0 accepted too)."""
    assert text in ("Y", "y", "1", "true", "N", "n", "0", "false"), f"auto reads {text!r}"
    return text in ("Y", "y", "1", "true")


def weights_fact(weights: dict[int, int]) -> str:
    """The host fact's spelling, "0:6,1:3,2:1"."""
    return ",".join(f"{n}:{w}" for n, w in sorted(weights.items()))


def facts(text: str) -> dict[str, str]:
    return {l["field"]: l["value"] for l, _ in samples(text, "numaprobe_host_fact_info")}


def measured_nodes(ok: set[tuple[int, int, str]]) -> tuple[dict[int, set[int]], set[int]]:
    """The memory nodes each CPU node's `measured` vector must have, and those
    of `measured_nearest`, given the successful peak figures `ok` ((cpu_node,
    mem_node, op)): all of them when every figure the vector is made of
    exists, else none."""
    nodes = set(EXPECTED)

    def both(c: int, m: int) -> bool:
        return (c, m, "read") in ok and (c, m, "write") in ok

    nearest = {m: min(TOPOLOGY.cpu_nodes(), key=lambda c: TOPOLOGY.distance(c, m)) for m in nodes}
    measured = {c: nodes if all(both(c, m) for m in nodes) else set() for c in TOPOLOGY.cpu_nodes()}
    return measured, nodes if all(both(nearest[m], m) for m in nodes) else set()


def summary(by_cpu: dict[int, dict]) -> str:
    """The vectors side by side, a line per CPU node (docs/measurement.md quotes it)."""
    def vec(v: dict[int, int]) -> str:
        return "{" + ", ".join(f"{n}: {w}" for n, w in sorted(v.items())) + "}"
    ratio = lambda e: "-" if e["kernel_over_nearest"] is None else f"{e['kernel_over_nearest']:.2f}"  # noqa: E731
    return "\n".join(f"cpu_node {c}: kernel {vec(e['kernel'])}  firmware {vec(e['firmware'])}  "
                     f"measured {vec(e['measured'])}  measured_nearest {vec(e['measured_nearest'])}  "
                     f"kernel_over_nearest {ratio(e)}" for c, e in sorted(by_cpu.items()))


def assert_vectors(guest, step: str, kernel: dict[int, int]) -> None:
    """`step`'s JSON: an entry for each CPU node with a peak figure, each with
    `kernel` == `kernel` and `firmware` == EXPECTED; the measured vectors
    exactly where their figures are, each weight in the kernel's [1, 32]."""
    records = assert_peak(guest, step, {c: set(TOPOLOGY.node_cpus(c)) for c in TOPOLOGY.cpu_nodes()})
    ok = {(r["cpu_node"], r["mem_node"], r["op"]) for r in records if r["outcome"] == "ok"}
    assert ok, f"{step}: no peak figure, so no interleave vectors:\n" + guest.describe()
    report = guest.json(step)
    by_cpu = {e["cpu_node"]: {k: ({int(n): w for n, w in v.items()} if isinstance(v, dict) else v)
                              for k, v in e.items()} for e in report["interleave_weights"]}
    assert set(by_cpu) == {c for c, _, _ in ok}, (step, report["interleave_weights"], sorted(ok))
    measured, nearest = measured_nodes(ok)
    for c, e in by_cpu.items():
        assert e["kernel"] == kernel, (step, c, e)
        assert e["firmware"] == EXPECTED, (step, c, e)
        assert set(e["measured"]) == measured[c], (step, c, e, sorted(ok))
        assert set(e["measured_nearest"]) == nearest, (step, c, e, sorted(ok))
        for w in list(e["measured"].values()) + list(e["measured_nearest"].values()):
            assert isinstance(w, int) and 1 <= w <= 32, (step, c, e)
    # What docs/measurement.md quotes (pytest -s shows it).
    print(f"{step}: numaprobe probe --format json --tests peak_bandwidth {PEAK}\n{summary(by_cpu)}")


def assert_metric_vectors(guest, scrape: str, kernel: dict[int, int]) -> None:
    """numaprobe_interleave_weight in `scrape`: for each CPU node with a peak
    figure there, source kernel == `kernel` and firmware == EXPECTED, and
    the measured sources exactly where their figures are."""
    text = guest.text(scrape)
    got: dict[tuple[int, str], dict[int, int]] = {}
    for labels, value in samples(text, "numaprobe_interleave_weight"):
        assert value == int(value), (labels, value)
        got.setdefault((int(labels["cpu_node"]), labels["source"]), {})[int(labels["mem_node"])] = int(value)
    ok = {(int(l["cpu_node"]), int(l["mem_node"]), l["op"])
          for l, _ in samples(text, "numaprobe_memory_peak_bandwidth_bytes_per_second")}
    assert ok, f"{scrape}: no peak figure on /metrics, so no interleave weights:\n" + guest.describe()
    cpu_nodes = {c for c, _, _ in ok}
    assert {c for c, _ in got} == cpu_nodes, (scrape, sorted(got), sorted(ok))
    measured, nearest = measured_nodes(ok)
    for c in cpu_nodes:
        assert got[(c, "kernel")] == kernel, (scrape, got)
        assert got[(c, "firmware")] == EXPECTED, (scrape, got)
        assert set(got.get((c, "measured"), {})) == measured[c], (scrape, c, got, sorted(ok))
        assert set(got.get((c, "measured_nearest"), {})) == nearest, (scrape, c, got, sorted(ok))


def assert_split(guest, step: str, weights: dict[int, int]) -> None:
    """`step`'s interleave_bandwidth records: one per CPU node, each buffer
    spread by the weights in use (`weights`): each node's share of the pages
    within one cycle of the weights (W of the buffer's pages) of w / W, and
    the kind's own check agreeing. Not the bandwidth, which is TCG's."""
    records = guest.json(step)["interleave_bandwidth"]
    assert sorted(r["cpu_node"] for r in records) == sorted(TOPOLOGY.cpu_nodes()), (step, records)
    total = sum(weights.values())
    for r in records:
        assert {int(n): w for n, w in r["weights"].items()} == weights, (step, r)
        assert r["outcome"] in ("ok", "disturbed"), (step, r["outcome"], r.get("reason"))
        assert r["split_mismatch"] == "", (step, r["split_mismatch"])  # the kind's check found none
        pages = r["buffer"]["bytes"] // 4096
        shares = {int(n): share for n, share in r["page_shares"].items()}
        assert set(shares) == set(weights), (step, shares)
        for node, w in weights.items():
            assert abs(shares[node] - w / total) <= total / pages, (step, node, shares, weights, pages)
    print(f"{step}: " + "; ".join(f"cpu_node {r['cpu_node']} shares {r['page_shares']}" for r in records))


def test_the_interleave_kind_spreads_pages_by_the_weights_in_use(guest):
    """numaprobe's interleave_bandwidth kind on a real kernel's
    MPOL_WEIGHTED_INTERLEAVE: the auto weights (6:3:1), then the hand-set
    ones (6:5:1) give the page split it checks and reports."""
    assert_split(guest, "split_auto", EXPECTED)
    assert_split(guest, "split_manual", MANUAL)


def test_the_guest_has_the_hmat_given_to_qemu(guest):
    """The kernel's CPU class holds each node's read and write bandwidth as
    given: min(read, write) is the read for nodes 0 and 1, the write for 2."""
    lines = guest.text("hmat_sysfs").splitlines()
    for node, lb in CPU_CLASS.items():
        base = f"/sys/devices/system/node/node{node}/access1/initiators"
        read, write = lb.read_write_mib
        assert f"{base}/read_bandwidth {read}" in lines, (node, lines)
        assert f"{base}/write_bandwidth {write}" in lines, (node, lines)


def test_auto_mode_sets_the_kernels_rule_from_the_hmat(guest):
    text = guest.text("wi_boot")
    assert "No such file" not in text, f"no weighted interleave auto mode in the guest kernel:\n{text}"
    auto, weights = sysfs_weights(guest, "wi_boot")
    assert is_true(auto), text
    assert weights == EXPECTED, f"kernel {weights}, the rule on the HMAT given to QEMU {EXPECTED}"
    assert sysfs_weights(guest, "wi_before_write") == (auto, weights), "the weights moved before the write"


def test_probe_reports_the_auto_weights_as_kernel_and_firmware(guest):
    assert_vectors(guest, "probe_auto", EXPECTED)


def test_daemon_reports_the_auto_weights_as_kernel_and_firmware(guest):
    assert_metric_vectors(guest, "metrics_auto", EXPECTED)
    host = facts(guest.text("metrics_auto"))
    assert host["weighted_interleave"] == weights_fact(EXPECTED), host
    assert host["weighted_interleave_auto"] == "true", host


def test_a_weight_written_by_hand_is_the_kernel_vector_and_firmware_stays(guest):
    auto, weights = sysfs_weights(guest, "wi_manual")
    assert not is_true(auto), guest.text("wi_manual")
    assert weights == MANUAL, weights
    # The daemon: the host fact changed, and its kernel vector with it.
    after = guest.text("metrics_manual")
    host = facts(after)
    assert host["weighted_interleave"] == weights_fact(MANUAL), host
    assert host["weighted_interleave_auto"] == "false", host
    changes = {l["field"]: (l["before"], l["after"])
               for l, _ in samples(after, "numaprobe_host_change_timestamp_seconds")}
    assert changes.get("weighted_interleave") == (weights_fact(EXPECTED), weights_fact(MANUAL)), changes
    assert changes.get("weighted_interleave_auto") == ("true", "false"), changes
    assert_metric_vectors(guest, "metrics_manual", MANUAL)
    assert guest.text("serve.rc").strip() == "0", guest.text("serve.log")[-3000:]
    # The one-shot CLI, run after the daemon stopped, reads the same.
    assert_vectors(guest, "probe_manual", MANUAL)
