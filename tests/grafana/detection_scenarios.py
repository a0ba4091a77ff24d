# SPDX-License-Identifier: Apache-2.0
"""The detection scenarios of docs/detection.md, run through `promtool test rules`
with both rule files, and what each must (and must not) fire.

How a scenario is measured: series_gen renders the daemon's series; the test
file adds the probes of promtool_probes.py (first and last firing time and
number of firing evaluations of every alert series, per 2-hour window, read
back from promtool's report), and check() compares them with the scenario's
expectations. Any other promtool failure (a rule that does not evaluate, a
query over the sample limit) is an error.

The alert groups are evaluated before the recording groups (group_eval_order),
so every alert reads recorded series one evaluation late: the worst case of
Prometheus' independent group timers.

Run `python3 tests/grafana/detection_scenarios.py` for the time-to-fire table.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import series_gen as sg  # noqa: E402
from promtool_probes import (PROMTOOL, margin_probes, parse_report, probes,  # noqa: E402
                             windows)

SOURCE_DIR = Path(os.environ.get("NUMAPROBE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
# Another rules directory (e.g. a deliberately weakened copy) for showing that the tests fail.
RULES_DIR = Path(os.environ.get("NUMAPROBE_RULES_DIR", SOURCE_DIR / "grafana" / "rules"))
MIN, H = 60, 3600


@dataclass
class Expect:
    """An alert series that must fire: first firing within `within_s` of the
    reference time (the onset, or the n-th figure of `series` after it)."""
    alert: str
    labels: dict[str, str]
    onset_s: int
    within_s: int
    after_figure: int = 0  # 0: from the onset; n: from the n-th figure after the onset
    series: dict[str, str] | None = None  # labels of the figure series for after_figure
    figure_kind: str | None = None  # that series' kind; None: bandwidth if it has an op, else latency
    stays: bool = True  # fires without a gap until resolve_by_s or the end
    resolve_by_s: int | None = None  # must have resolved by then
    description: str | None = None  # the description must contain this

    def matches(self, labels: dict[str, str]) -> bool:
        """A label given as "" must be absent, as in a PromQL matcher."""
        return labels.get("alertname") == self.alert and all(labels.get(k, "") == v for k, v in self.labels.items())


@dataclass
class Case:
    scenario: sg.Scenario
    expects: list[Expect]
    what: str  # every alert series not in expects must never fire
    # Labels compare_engines leaves out (the series that differ only in them
    # taken as one), where vmalert's replay is known to label differently.
    replay_drops: tuple[str, ...] = ()


@dataclass
class Fired:
    labels: dict[str, str]
    first: float
    last: float
    count: int


@dataclass
class Outcome:
    case: Case
    fired: list[Fired]
    descriptions: dict[str, list]  # alertname -> [(labels, annotations)] firing at the end
    runtime_s: float
    rows: list[dict]  # one per expectation
    problems: list[str]
    margins: dict[str, float] = field(default_factory=dict)  # quiet scenarios: extremes of the ratios
    series: list = field(default_factory=list)  # the generated input, for other engines


def inst(name: str) -> str:
    return f"{name}:10062"


def named(kind: str, pair: tuple[int, int]) -> str:
    """What a drift alert's description says of a drifted pair (it names
    every pair beyond the threshold, with its value)."""
    head = {"latency": "Pairs over +6%", "bandwidth": "Pairs under -13%", "peak": "Pairs under -4%"}[kind]
    return f"{head} (CPU node -> memory node): {pair[0]} -> {pair[1]} ("


def peer_named(first: str) -> str:
    """What the peer alert's description says first of the pairs out of line."""
    return f"Pairs beyond ±8% of their peers (CPU node -> memory node): {first}"


def promise(refresh_s: int) -> int:
    """How soon after the onset a +10% latency step or a -20% bandwidth drop
    must fire: 45 min on hosts whose series get a figure every 5 min, 60 min
    at 30 min (docs/detection.md, "What the drift alerts promise")."""
    return 45 * MIN if refresh_s <= 600 else 60 * MIN


# ------------------------------------------------------------------ scenarios

def regression(refresh_s: int, seed: int) -> Case:
    """+10% latency on one pair, -20% bandwidth on one series, one host each,
    four hosts per kind at different round phases. Each host has its own CPU
    model, so no peer comparison can fire."""
    onset = H
    hosts, steps, expects = [], [], []
    for k in range(4):
        lat, bw = f"lat{k}", f"bw{k}"
        hosts += [sg.Host(lat, cpu_model=f"model-{lat}", refresh_s=refresh_s),
                  sg.Host(bw, cpu_model=f"model-{bw}", refresh_s=refresh_s)]
        at = onset + k * 97
        steps += [sg.Step(lat, at, "latency", 1.10, pairs={(0, 1)}),
                  sg.Step(bw, at, "bandwidth", 0.80, pairs={(1, 1)}, ops={"read"})]
        limit = promise(refresh_s)
        # The drift alerts are per host (and op); the description names the pair.
        expects += [Expect("NumaProbeLatencyDrift", {"instance": inst(lat)}, at, limit,
                           description=named("latency", (0, 1))),
                    Expect("NumaProbeBandwidthDrop", {"instance": inst(bw), "op": "read"}, at, limit,
                           description=named("bandwidth", (1, 1)))]
    duration = onset + (2 * H if refresh_s <= 600 else 3 * H)
    return Case(sg.Scenario(f"regression_{refresh_s // 60}m", hosts, duration, seed, steps=steps), expects,
                f"+10% latency / -20% bandwidth on one series, {refresh_s // 60}-min refresh")


def peers(seed: int) -> Case:
    """Three cohorts of 5 hosts (the host and 4 same-model peers):
    A (5-min rounds): one host's remote pair 0->1 +12% from 1 h on;
    B (30-min rounds, daemons started at 0): one host 12% below its peers from the start;
    C (mixed rounds): a 30-min host's remote pair +12% from 1 h on."""
    hosts, steps, expects = [], [], []
    onset = H
    for k in range(5):
        hosts.append(sg.Host(f"a{k}", cpu_model="Xeon Gold 6338", refresh_s=300))
        hosts.append(sg.Host(f"b{k}", cpu_model="EPYC 7543", refresh_s=1800, start_s=0,
                             ratio_offset=-0.12 if k == 4 else None))
        hosts.append(sg.Host(f"c{k}", cpu_model="Xeon Platinum 8380", refresh_s=300 if k < 2 else 1800))
    steps += [sg.Step("a4", onset, "latency", 1.12, pairs={(0, 1)}),
              sg.Step("c4", onset, "latency", 1.12, pairs={(0, 1)})]
    four_h = 4 * H
    # From a daemon's start the peer median needs 9 figures on every host of
    # the cohort (up to 5.3 h at 30-min rounds), then the 2 h hold of hosts
    # with 30-min rounds.
    from_start = 7 * H + 30 * MIN
    # One peer alert per host, naming its pairs out of line (b4: both, below).
    expects += [
        Expect("NumaProbeRemoteLocalRatioOutlier", {"instance": inst("a4")}, onset, four_h,
               description=peer_named("0 -> 1 (")),
        Expect("NumaProbeRemoteLocalRatioOutlier", {"instance": inst("b4")}, 0, from_start,
               description=peer_named("0 -> 1 (-")),
        Expect("NumaProbeRemoteLocalRatioOutlier", {"instance": inst("c4")}, onset, four_h,
               description=peer_named("0 -> 1 (")),
        # The +12% steps are also drifts from the hosts' own baselines.
        Expect("NumaProbeLatencyDrift", {"instance": inst("a4")}, onset, promise(300),
               description=named("latency", (0, 1))),
        Expect("NumaProbeLatencyDrift", {"instance": inst("c4")}, onset, promise(1800),
               description=named("latency", (0, 1))),
    ]
    return Case(sg.Scenario("peers", hosts, from_start + 10 * MIN, seed, steps=steps), expects,
                "remote/local ratio 12% out of line with 4 same-model peers")


def rollout(seed: int) -> Case:
    """Every host of a cohort reboots into a new kernel within one hour, and
    every latency pair is 12% slower after it. The peers move together."""
    hosts, reboots, steps, expects = [], [], [], []
    start = 2 * H
    for k in range(6):
        name = f"r{k}"
        refresh = 300 if k % 2 == 0 else 1800
        hosts.append(sg.Host(name, cpu_model="Xeon Gold 6338", refresh_s=refresh))
        at = start + k * 10 * MIN
        reboots.append(sg.Reboot(name, at, changes=[("kernel", sg.KERNEL_OLD, sg.KERNEL_NEW)]))
        steps.append(sg.Step(name, at, "latency", 1.12))
        # One alert per host for its four drifted pairs. After a reboot the
        # recent median needs 5 figures again: the first figure, beyond its
        # band with no median yet, is confirmed.
        desc = f"since kernel {sg.KERNEL_OLD} -> {sg.KERNEL_NEW}"
        expects.append(Expect("NumaProbeLatencyDrift", {"instance": inst(name)}, at, promise(refresh),
                              description=desc))
    return Case(sg.Scenario("rollout", hosts, start + 6 * H, seed, steps=steps, reboots=reboots), expects,
                "fleet-wide kernel rollout, every host +12% latency after its reboot")


def accepted_rollout(seed: int) -> Case:
    """Four hosts (5- and 30-min rounds) reboot into a new kernel 10 min apart,
    every latency pair 12% slower: NumaProbeLatencyDrift fires naming the
    kernel (as in `rollout`). The operator accepts the new level 1 h after
    each reboot (`numaprobe baseline accept`): the host change is cleared and
    each series takes the median of its figures since the reboot as its
    baseline, at once where it has 5 of them (every series at 5-min rounds; at
    30-min rounds the latency series, whose first figure after the reboot was
    confirmed by 4 runs, have 6; the bandwidth series, with 2, record until
    their 5th, 59-103 min after the accept: test_series_gen.py). The drift
    alert resolves at the accept. One hour after the accept a real +10%
    regression of pair 0 -> 1 on a 5-min and a 30-min host fires within the
    usual promise from its onset, naming the pair and no host change. Each
    host has its own CPU model: no peer comparison."""
    hosts, reboots, steps, accepts, expects = [], [], [], [], []
    start = H
    change = f"kernel {sg.KERNEL_OLD} -> {sg.KERNEL_NEW}"
    for k in range(4):
        name = f"ar{k}"
        refresh = 300 if k % 2 == 0 else 1800
        hosts.append(sg.Host(name, cpu_model=f"model-{name}", refresh_s=refresh))
        at = start + k * 10 * MIN
        accept = at + H
        reboots.append(sg.Reboot(name, at, changes=[("kernel", sg.KERNEL_OLD, sg.KERNEL_NEW)]))
        steps.append(sg.Step(name, at, "latency", 1.12))
        accepts.append(sg.Accept(name, accept))
        # Resolves at the first scrape after the accept shows the new baseline.
        expects.append(Expect("NumaProbeLatencyDrift", {"instance": inst(name), "change": change}, at,
                              promise(refresh), resolve_by_s=accept + 3 * MIN))
        if k < 2:
            onset = accept + H + k * 97
            steps.append(sg.Step(name, onset, "latency", 1.10, pairs={(0, 1)}))
            expects.append(Expect("NumaProbeLatencyDrift", {"instance": inst(name), "change": ""}, onset,
                                  promise(refresh), description=named("latency", (0, 1))))
    end = start + 3 * 10 * MIN + 3 * H + 30 * MIN
    # vmalert's replay evaluates each rule as a range query, and there
    # victoria-metrics 1.79's `or on(instance, job)` in the rollout recording
    # keeps the first operand's labels over the whole range: the change
    # cleared at the accept stays on the regression's alert (an instant
    # query, as vmalert evaluates live, drops it). Compared without it.
    return Case(sg.Scenario("accepted_rollout", hosts, end, seed, steps=steps, reboots=reboots, accepts=accepts),
                expects, "kernel rollout +12% latency accepted 1 h after each reboot, then a real +10% regression",
                replay_drops=("change",))


def stale(seed: int) -> Case:
    """Probes of two pairs stop succeeding: s0 (5-min rounds) latency,
    s1 (30-min rounds) bandwidth. Half of each probe's runs fail."""
    onset = H
    hosts = [sg.Host("s0", refresh_s=300, cpu_model="m-s0"), sg.Host("s1", refresh_s=1800, cpu_model="m-s1")]
    stops = [sg.Stop("s0", onset, "latency", (0, 1)), sg.Stop("s0", onset, "latency", (1, 0)),
             sg.Stop("s1", onset, "bandwidth", (1, 1)), sg.Stop("s1", onset, "bandwidth", (1, 0))]
    expects = []
    for host, probe, refresh, pairs in (("s0", "latency", 300, ((0, 1), (1, 0))),
                                        ("s1", "bandwidth", 1800, ((1, 1), (1, 0)))):
        # Last success at most 1.2 rounds before the onset; 3 intervals, then 10 min.
        within = int(3 * refresh + 10 * MIN + 3 * MIN)
        # One alert per host and probe; its description names both pairs.
        named = ", ".join(f"{c} -> {m}" for c, m in sorted(pairs))
        expects.append(Expect("NumaProbeProbeStale", {"instance": inst(host), "probe": probe}, onset, within,
                              description=f"Stale pairs (CPU node -> memory node): {named}."))
        # 1h failure window over 25%, then 30 min; at 30-min rounds the window holds 2 rounds.
        expects.append(Expect("NumaProbeProbesFailing", {"instance": inst(host), "probe": probe}, onset,
                              int(30 * MIN + 30 * MIN + 1.2 * refresh + 3 * MIN)))
    return Case(sg.Scenario("stale", hosts, onset + 3 * 1800 + 2 * H, seed, stops=stops), expects,
                "a pair's probes stop succeeding (5- and 30-min rounds)")


def health(seed: int) -> Case:
    onset = H
    hosts = [sg.Host(f"h{k}", cpu_model=f"m-h{k}") for k in range(8)]
    stops = [sg.Stop("h0", onset, "bandwidth", (0, 1), result="placement_mismatch")]
    faults = [sg.Fault("h1", onset, "duty"), sg.Fault("h2", onset, "reload"),
              sg.Fault("h3", onset, "down", until_s=onset + 40 * MIN),
              sg.Fault("h4", onset, "recording"), sg.Fault("h5", onset, "memory_errors"),
              sg.Fault("h6", onset, "state_write"), sg.Fault("h7", onset, "features_write")]
    # h4 records again at the onset and never arms: twice the predicted
    # recording time (baseline rounds of its refresh interval), then 30 min.
    predicted = sg.BASELINE_ROUNDS * hosts[4].refresh_s * hosts[4].rotation_rounds
    expects = [
        Expect("NumaProbePlacementFailures", {"instance": inst("h0"), "mem_node": "1"}, onset, H + 10 * MIN),
        Expect("NumaProbeProbeStale", {"instance": inst("h0"), "probe": "bandwidth"}, onset, 3 * 360 + 13 * MIN,
               description="Stale pairs (CPU node -> memory node): 0 -> 1."),
        Expect("NumaProbeDutyCycleOverBudget", {"instance": inst("h1")}, onset, 30 * MIN + 360 + 3 * MIN),
        Expect("NumaProbeConfigReloadFailed", {"instance": inst("h2")}, onset, 10 * MIN + 3 * MIN),
        Expect("NumaProbeExporterDown", {"instance": inst("h3")}, onset, 15 * MIN + 3 * MIN,
               resolve_by_s=onset + 40 * MIN + 3 * MIN),
        Expect("NumaProbeBaselineNotArmed", {"instance": inst("h4")}, onset, 2 * predicted + 30 * MIN + 3 * MIN),
        # The first scrape that sees the count, then 1 min.
        Expect("NumaProbeUncorrectedMemoryErrors", {"instance": inst("h5"), "type": "uncorrected"}, onset,
               1 * MIN + 3 * MIN, description="uncorrected memory errors on h5:10062 since its numaprobe baseline"),
        # The first failed write, then 1 min (twice the 30-s save interval).
        Expect("NumaProbeStateNotWritten", {"instance": inst("h6")}, onset, 1 * MIN + 3 * MIN),
        # The first failed write, then 5 min (NFD drops the labels only three refresh intervals after the last write).
        Expect("NumaProbeNodeFeaturesNotWritten", {"instance": inst("h7")}, onset, 5 * MIN + 3 * MIN),
    ]
    return Case(sg.Scenario("health", hosts, onset + 2 * predicted + H, seed, stops=stops, faults=faults),
                expects, "placement failures, duty cycle over budget, failed reload, exporter down, "
                "a baseline that never arms, uncorrected memory errors, a state file not written, a node feature file "
                "not written")


def absent(seed: int) -> Case:
    onset = H
    hosts = [sg.Host("x0", cpu_model="m-x0"), sg.Host("x1", cpu_model="m-x1", refresh_s=1800)]
    faults = [sg.Fault("x0", onset, "gone"), sg.Fault("x1", onset, "gone")]
    return Case(sg.Scenario("absent", hosts, onset + H, seed, faults=faults),
                # up stays visible for the 5 min lookback, then 15 min.
                [Expect("NumaProbeExporterAbsent", {}, onset, 5 * MIN + 15 * MIN + 3 * MIN)],
                "every numaprobe target disappears from service discovery")


def topology(seed: int) -> Case:
    """t0 and t1 reboot with another SNC/NPS mode (topology_changed) and a
    firmware update; an operator accepts t0's new baseline 2 h later and never
    t1's. t2 reboots with only a numaprobe upgrade (restored)."""
    onset, accept = H, 3 * H
    hosts = [sg.Host("t0", cpu_model="m-t0"), sg.Host("t1", cpu_model="m-t1", refresh_s=1800),
             sg.Host("t2", cpu_model="m-t2")]
    fw = [("firmware", "1.2.3", "1.4.0")]
    reboots = [sg.Reboot("t0", onset, changes=fw), sg.Reboot("t1", onset, changes=fw),
               sg.Reboot("t2", onset, changes=[("numaprobe_version", "0.9.0", "0.9.1")])]
    origins = [sg.Origin("t0", onset + 240, "topology_changed", "f2"), sg.Origin("t0", accept, "accepted", "f2"),
               sg.Origin("t1", onset + 240, "topology_changed", "f2")]
    expects = [
        Expect("NumaProbeTopologyChanged", {"instance": inst("t0")}, onset + 240, 5 * MIN + 3 * MIN,
               resolve_by_s=accept + 2 * MIN, description="firmware 1.2.3 -> 1.4.0"),
        Expect("NumaProbeTopologyChanged", {"instance": inst("t1")}, onset + 240, 5 * MIN + 3 * MIN,
               description="firmware 1.2.3 -> 1.4.0"),
    ]
    return Case(sg.Scenario("topology", hosts, accept + 2 * H, seed, reboots=reboots, origins=origins),
                expects, "NUMA topology changed; accepted on one host only")


def rotation(seed: int) -> Case:
    """A big host whose pairs rotate (daemon/serve/rotation.h): 5-min rounds,
    6 rounds a cycle, so the representatives (0,0) and (1,0) get a figure every
    5 min, the rotated pairs (0,1) and (1,1) every 30 min, and the host exports
    a refresh interval of 30 min. +10% latency on a rotated pair and on a
    representative, -20% read bandwidth on a rotated pair: a rotated series
    fires within the 30-min promise, a representative within the 5-min one.
    Hosts of their own CPU models, so no peer comparison fires."""
    onset = H
    hosts = [sg.Host(f"rot{k}", cpu_model=f"model-rot{k}", refresh_s=300, rotation_rounds=6) for k in range(3)]
    steps = [sg.Step("rot0", onset, "latency", 1.10, pairs={(0, 1)}),
             sg.Step("rot1", onset + 97, "latency", 1.10, pairs={(1, 0)}),
             sg.Step("rot2", onset + 197, "bandwidth", 0.80, pairs={(1, 1)}, ops={"read"})]
    expects = [Expect("NumaProbeLatencyDrift", {"instance": inst("rot0")}, onset, promise(1800),
                      description=named("latency", (0, 1))),
               Expect("NumaProbeLatencyDrift", {"instance": inst("rot1")}, onset + 97, promise(300),
                      description=named("latency", (1, 0))),
               Expect("NumaProbeBandwidthDrop", {"instance": inst("rot2"), "op": "read"}, onset + 197, promise(1800),
                      description=named("bandwidth", (1, 1)))]
    return Case(sg.Scenario("rotation", hosts, onset + 3 * H + 30 * MIN, seed, steps=steps), expects,
                "rotating big host: +10% latency on a rotated pair and a representative, -20% bandwidth")


def peak(seed: int) -> Case:
    """probes.peak_bandwidth (figures 6 h apart, 2.5% noise, a daily -15%
    outlier, 10% of the idle-gate checks find the node busy):
    pk0 (5-min rounds) reboots with one DIMM of 8 gone from node 0 (EDAC and
    node memory change): both ops of node 0's own memory -12.5%, the first
    peak cycle comes at the first round after the start;
    pk1 (30-min rounds): the link from node 1 to node 0's memory -12.5% for
    read, found by the next cycle, hours after the onset;
    pk2 (5-min rounds): healthy, its nodes busy at 70% of the checks (many
    skipped runs), must fire nothing: skipped runs are no failures, and the
    probe is not judged stale.
    A figure more than 8% under its baseline is confirmed by 4 runs at once,
    so each alert fires within minutes of the first figure after the loss
    (98% of the losses at 2.5% noise; docs/detection.md, "The peak
    bandwidth alert")."""
    onset = H
    hosts = [sg.Host("pk0", cpu_model="m-pk0", peak_interval_s=sg.PEAK_INTERVAL_S),
             sg.Host("pk1", cpu_model="m-pk1", refresh_s=1800, peak_interval_s=sg.PEAK_INTERVAL_S),
             sg.Host("pk2", cpu_model="m-pk2", peak_interval_s=sg.PEAK_INTERVAL_S, peak_busy=0.7)]
    edac = ("edac_memory", "controllers=1 dimms=8 size_mib=262144 types=DDR5",
            "controllers=1 dimms=7 size_mib=229376 types=DDR5")
    memory = ("node0.mem_total_bytes", "270582939648", "236223201280")
    reboots = [sg.Reboot("pk0", onset, changes=[edac, memory])]
    steps = [sg.Step("pk0", onset, "peak", 0.875, pairs={(0, 0)}),
             sg.Step("pk1", onset + 97, "peak", 0.875, pairs={(1, 0)}, ops={"read"})]
    within = 20 * MIN  # 4 confirmations 0.5-2 min apart, `for: 5m`, a scrape and an evaluation
    expects = [
        Expect("NumaProbePeakBandwidthDrop", {"instance": inst("pk0"), "op": op}, onset, within, after_figure=1,
               series={"instance": inst("pk0"), "cpu_node": "0", "mem_node": "0", "op": op}, figure_kind="peak",
               description=f"since {edac[0]} {edac[1]} -> {edac[2]}, {memory[0]} {memory[1]} -> {memory[2]}")
        for op in sg.PEAK_OPS
    ] + [
        Expect("NumaProbePeakBandwidthDrop", {"instance": inst("pk1"), "op": "read"}, onset + 97, within,
               after_figure=1, series={"instance": inst("pk1"), "cpu_node": "1", "mem_node": "0", "op": "read"},
               figure_kind="peak", description=named("peak", (1, 0))),
    ]
    return Case(sg.Scenario("peak", hosts, onset + 7 * H, seed, steps=steps, reboots=reboots), expects,
                "peak bandwidth: a lost channel of 8 (reboot, EDAC), a degraded link, a busy node")


def interleave(seed: int) -> Case:
    """Weighted interleave on two peak hosts (figures 6 h apart, as in
    `peak`): il0's kernel weights were set by hand to 3:1 for node 0, so an
    interleaved stream from node 1 (node 0 is remote to it, 0.45 of local)
    gets 0.67 of what the kernel's rule on the measured figures (1:1) gives;
    from node 0 the hand-set weights do better, so only cpu_node 1 fires,
    12 h (interleaveFor, two peak cycles) after its first ratio, which comes
    with the first peak cycle, within minutes of the start. il1 runs the
    kernel's auto weights on the same symmetric host, 1:1: quiet, its daily
    -15% outlier figure included (it stands one cycle, under 12 h)."""
    hosts = [sg.Host("il0", cpu_model="m-il0", peak_interval_s=sg.PEAK_INTERVAL_S, interleave_weights={0: 3, 1: 1}),
             sg.Host("il1", cpu_model="m-il1", peak_interval_s=sg.PEAK_INTERVAL_S, interleave_weights={0: 1, 1: 1})]
    expects = [Expect("NumaProbeInterleaveWeightsCostBandwidth", {"instance": inst("il0"), "cpu_node": "1"}, 0,
                      12 * H + 45 * MIN)]
    return Case(sg.Scenario("interleave", hosts, 15 * H, seed), expects,
                "interleave weights: hand-set weights that cost one socket a third of its bandwidth")


def quiet(part: int, seed: int) -> Case:
    """Seven healthy days, run as two halves of 3.5 days (two promtool
    processes in parallel): a cohort of 5 hosts of one model, 5-min rounds
    (one in per-CPU mode, one with 2 bandwidth threads) and 30-min rounds, and
    a host whose pairs rotate (5-min rounds, 6 a cycle); peak bandwidth on
    a 5-min and a 30-min host (figures 6 h apart); one
    daemon upgrade with a reboot. Evaluated every 2 min (figures change every
    5 or 30 min, so every figure is evaluated at least twice)."""
    hosts = [sg.Host("q0", peak_interval_s=sg.PEAK_INTERVAL_S), sg.Host("q1", per_cpu=True),
             sg.Host("q2", threads=2), sg.Host("q3", refresh_s=1800, peak_interval_s=sg.PEAK_INTERVAL_S),
             sg.Host("q4", refresh_s=1800), sg.Host("q5", cpu_model="m-q5", rotation_rounds=6)]
    reboots = [sg.Reboot("q0", 86400 + 5000, changes=[("numaprobe_version", "0.9.0", "0.9.1")])] if part == 1 else []
    return Case(sg.Scenario(f"quiet_days_{(part - 1) * 3.5:g}_{part * 3.5:g}", hosts, int(3.5 * 86400), seed,
                            reboots=reboots, eval_s=120), [],
                "healthy: noise, outliers, failed scrapes, 5- and 30-min rounds, a restart")


def saturated_write(seed: int) -> Case:
    """Not a test (docs/detection.md, "Limits"): healthy hosts whose bandwidth
    figures scatter like the write figures measured on the saturated build
    machine. Counts the alerts that fires."""
    hosts = [sg.Host("w0", cpu_model="m-w0"), sg.Host("w1", cpu_model="m-w1", refresh_s=1800)]
    return Case(sg.Scenario("saturated_write", hosts, int(3.5 * 86400), seed, eval_s=120,
                            noise="write_saturated"), [],
                "bandwidth noise as measured for write on the saturated machine (expected to fire)")


# Run by name from the command line only.
EXPERIMENTS = {"saturated_write": lambda: saturated_write(21)}

CASES = {
    "regression_5m": lambda: regression(300, 11),
    "regression_30m": lambda: regression(1800, 12),
    "peers": lambda: peers(13),
    "rollout": lambda: rollout(14),
    "accepted_rollout": lambda: accepted_rollout(25),
    "stale": lambda: stale(15),
    "health": lambda: health(16),
    "absent": lambda: absent(17),
    "topology": lambda: topology(18),
    "rotation": lambda: rotation(23),
    "peak": lambda: peak(24),
    "interleave": lambda: interleave(26),
    "quiet_days_0_3.5": lambda: quiet(1, 19),
    "quiet_days_3.5_7": lambda: quiet(2, 20),
}


# ------------------------------------------------------------------- running

def rule_groups() -> tuple[list[str], list[str]]:
    def names(f):
        return [g["name"] for g in yaml.safe_load((RULES_DIR / f).read_text())["groups"]]
    return names("alerts.yaml"), names("recording.yaml")


def figure_times(scn: sg.Scenario, labels: dict[str, str], kind: str) -> list[float]:
    """When the daemon published the figures of one series (per-CPU series: any CPU)."""
    name = {"latency": "numaprobe_memory_latency_seconds", "bandwidth": "numaprobe_memory_bandwidth_bytes_per_second",
            "peak": "numaprobe_memory_peak_bandwidth_bytes_per_second"}[kind]
    out = []
    for (n, instance, lab), times in scn.figure_log.items():
        lab = dict(lab, instance=instance)
        if n == name and all(lab.get(k) == v for k, v in labels.items()):
            out += times
    if not out:
        raise KeyError(f"no {name} series with {labels}")
    return sorted(out)


def run_case(case: Case, workdir: Path) -> Outcome:
    scn = case.scenario
    series = scn.series()  # also fills scn.figure_log
    alert_groups, recording_groups = rule_groups()
    probe_tests = probes(scn.duration_s)
    margins = margin_probes(scn.duration_s) if not case.expects else {}
    probe_tests += [{"expr": e, "eval_time": f"{end}s", "exp_samples": []}
                    for end, w in windows(scn.duration_s) for e in margins if f"[{w}" in e]
    annotation_tests = [{"alertname": a, "eval_time": f"{scn.duration_s}s", "exp_alerts": []}
                        for a in sorted({e.alert for e in case.expects if e.description})]
    doc = sg.test_file(scn, series, [str(RULES_DIR / "recording.yaml"), str(RULES_DIR / "alerts.yaml")],
                       alert_groups + recording_groups, probe_tests, annotation_tests)
    path = workdir / f"{scn.name}.json"
    path.write_text(json.dumps(doc))
    t0 = time.monotonic()
    res = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=900)
    runtime = time.monotonic() - t0
    if os.environ.get("NUMAPROBE_DETECTION_KEEP"):
        (workdir / f"{scn.name}.out").write_text(res.stdout + res.stderr)
    results, descriptions, other = parse_report(res.stdout + res.stderr, {p["expr"] for p in probe_tests})
    problems = [f"promtool: {line.strip()}" for line in other]
    if res.returncode not in (0, 1):
        problems.append(f"promtool exited with {res.returncode}")
    margin_values: dict[str, float] = {}
    for key, samples in list(results.items()):
        if key[0] in margins:
            name, agg = margins[key[0]]
            for _, v in samples:
                old = margin_values.get(name)
                margin_values[name] = v if old is None else (max(old, v) if agg == "max" else min(old, v))
            del results[key]
    fired = collect(results)
    rows = check(case, fired, descriptions, problems)
    return Outcome(case, fired, descriptions, runtime, rows, problems, margin_values, series)


def collect(results) -> list[Fired]:
    by_key: dict[tuple, Fired] = {}
    for (expr, _), samples in results.items():
        for labels, v in samples:
            labels = {k: v2 for k, v2 in labels.items() if k not in ("alertstate",)}
            key = tuple(sorted(labels.items()))
            f = by_key.setdefault(key, Fired(labels, float("inf"), float("-inf"), 0))
            if expr.startswith("min_over_time"):
                f.first = min(f.first, v)
            elif expr.startswith("max_over_time"):
                f.last = max(f.last, v)
            else:
                f.count += int(v)
    return sorted(by_key.values(), key=lambda f: (f.labels.get("alertname", ""), f.first))


def check(case: Case, fired: list[Fired], descriptions, problems: list[str]) -> list[dict]:
    scn = case.scenario
    rows = []
    for e in case.expects:
        ref = e.onset_s
        if e.after_figure:
            kind = e.figure_kind or ("bandwidth" if "op" in e.series else "latency")
            figs = [t for t in figure_times(scn, e.series, kind) if t > e.onset_s]
            ref = figs[e.after_figure - 1] if len(figs) >= e.after_figure else float("inf")
        hits = [f for f in fired if e.matches(f.labels)]
        first = min((f.first for f in hits), default=None)
        row = {"alert": e.alert, "labels": e.labels, "onset": e.onset_s, "ref": ref, "first": first,
               "ttf_onset": None if first is None else first - e.onset_s,
               "ttf_ref": None if first is None else first - ref, "within": e.within_s,
               "basis": "onset" if not e.after_figure else f"figure {e.after_figure} after onset"}
        rows.append(row)
        what = f"{e.alert}{e.labels}"
        if not hits:
            problems.append(f"{what} never fired (must within {e.within_s / MIN:.0f} min of the {row['basis']})")
            continue
        if first < e.onset_s:
            problems.append(f"{what} fired at {first / MIN:.0f} min, before the onset at {e.onset_s / MIN:.0f} min")
        if first - ref > e.within_s:
            problems.append(f"{what} fired {(first - ref) / MIN:.0f} min after the {row['basis']}, "
                            f"limit {e.within_s / MIN:.0f} min")
        for f in hits:
            if e.resolve_by_s is not None and f.last > e.resolve_by_s:
                problems.append(f"{what} still firing at {f.last / MIN:.0f} min, must resolve by "
                                f"{e.resolve_by_s / MIN:.0f} min")
            end = e.resolve_by_s if e.resolve_by_s is not None else scn.duration_s
            if e.stays and f.count != int((f.last - f.first) // scn.eval_s) + 1:
                problems.append(f"{what} flapped: {f.count} firing evaluations between "
                                f"{f.first / MIN:.0f} and {f.last / MIN:.0f} min")
            if e.stays and e.resolve_by_s is None and f.last < end - 2 * scn.eval_s:
                problems.append(f"{what} resolved at {f.last / MIN:.0f} min although the fault persists")
        if e.description and e.resolve_by_s is None:
            descs = [ann.get("description", "") for labels, ann in descriptions.get(e.alert, [])
                     if e.matches(labels)]
            if not descs or not all(e.description in d for d in descs):
                problems.append(f"{what}: description lacks {e.description!r}: {descs[:1]}")
    for f in fired:
        if not any(e.matches(f.labels) for e in case.expects):
            problems.append(f"unexpected: {f.labels} fired at {f.first / MIN:.0f} min "
                            f"({f.count} evaluations)")
    return rows


def compare_engines(o: Outcome, other: dict[tuple, tuple[float, float, int]], other_eval_s: int) -> list[str]:
    """Differences between promtool's firing alert series and another
    engine's ({labels: (first, last, count)}): every series fires in both, its
    first firing and its resolution (if it resolves) within one evaluation
    interval of each other."""
    tol = max(o.case.scenario.eval_s, other_eval_s)
    end = o.case.scenario.duration_s
    problems = []

    def merged(items) -> dict[tuple, tuple[float, float, int]]:
        out: dict[tuple, tuple[float, float, int]] = {}
        for key, (first, last, count) in items:
            key = tuple(kv for kv in key if kv[0] not in o.case.replay_drops)
            f0, l0, c0 = out.get(key, (first, last, 0))
            out[key] = (min(f0, first), max(l0, last), c0 + count)
        return out

    ours = merged((tuple(sorted(f.labels.items())), (f.first, f.last, f.count)) for f in o.fired)
    other = merged(other.items())
    for key in sorted(set(ours) | set(other)):
        name = dict(key).get("alertname")
        if key not in other:
            problems.append(f"only promtool fired {dict(key)} (at {ours[key][0] / MIN:.0f} min)")
            continue
        first, last, _ = other[key]
        if key not in ours:
            problems.append(f"only the other engine fired {dict(key)} (at {first / MIN:.0f} min)")
            continue
        f_first, f_last, _ = ours[key]
        if abs(first - f_first) > tol:
            problems.append(f"{name} {dict(key)}: first firing at {first / MIN:.0f} min, promtool {f_first / MIN:.0f}")
        resolved = [x < end - 2 * tol for x in (last, f_last)]
        if any(resolved) and abs(last - f_last) > tol:
            problems.append(f"{name} {dict(key)}: last firing at {last / MIN:.0f} min, promtool {f_last / MIN:.0f}")
    return problems


def run_all(names: list[str] | None = None, workers: int = 2) -> dict[str, Outcome]:
    """Runs the scenarios, `workers` promtool processes at a time. The test
    files are kept in $NUMAPROBE_DETECTION_KEEP if that names a directory."""
    names = names or list(CASES)
    keep = os.environ.get("NUMAPROBE_DETECTION_KEEP")
    with tempfile.TemporaryDirectory(prefix="numaprobe-detection-") as tmp:
        workdir = Path(keep) if keep else Path(tmp)
        with ThreadPoolExecutor(workers) as pool:
            # The long quiet halves first, so the short scenarios fill the other worker.
            order = sorted(names, key=lambda n: not n.startswith("quiet"))
            futures = {n: pool.submit(run_case, {**CASES, **EXPERIMENTS}[n](), workdir) for n in order}
            return {n: futures[n].result() for n in names}


def table(outcomes: dict[str, Outcome]) -> str:
    """Time to fire of every expectation (minutes after the onset, and after the
    reference the limit counts from), and the margins of the quiet scenarios."""
    lines = [f"{'scenario':<17}{'alert':<33}{'series':<24}{'onset+':>7}  {'after ref':<30}{'limit':>6}"]
    for name, o in outcomes.items():
        for r in o.rows:
            labels = r["labels"]
            series = f"{labels.get('instance', '').split(':')[0]} " + ",".join(
                v if v else f"no {k}" for k, v in labels.items() if k != "instance")
            onset = "never" if r["ttf_onset"] is None else f"{r['ttf_onset'] / MIN:.0f}m"
            ref = "" if r["ttf_ref"] is None else f"{r['ttf_ref'] / MIN:.0f}m after {r['basis']}"
            lines.append(f"{name:<17}{r['alert']:<33}{series.strip():<24}{onset:>7}  {ref:<30}{r['within'] / MIN:>5.0f}m")
        if not o.rows:
            lines.append(f"{name:<17}nothing may fire: {len(o.fired)} alert series fired")
            for m, v in o.margins.items():
                lines.append(f"{name:<17}  {m}: {v:.4f}")
        lines.append(f"{name:<17}promtool {o.runtime_s:.1f} s, {len(o.problems)} problems")
    return "\n".join(lines)


if __name__ == "__main__":
    t0 = time.monotonic()
    outs = run_all(sys.argv[1:] or None)
    print(table(outs))
    for n, o in outs.items():
        for p in o.problems:
            print(f"{n}: {p}")
    print(f"total {time.monotonic() - t0:.1f} s")
