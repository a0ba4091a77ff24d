# SPDX-License-Identifier: Apache-2.0
"""Realistic numaprobe daemon series for `promtool test rules`.

Simulates what Prometheus stores when it scrapes numaprobe daemons every
minute: jittered probe rounds, figures with the noise measured on a real host
(docs/detection.md, "Noise"), single outlier figures, rounds a probe missed,
failed scrapes (staleness markers and up == 0), daemon restarts that reset the
recent medians, host fingerprint changes, steps in the figures, probes that stop
succeeding, operators accepting the current level as the baseline, and the
health series (run counters, duty cycle, reload status).

`Scenario.test_file()` renders one promtool test group with both rule files
loaded; detection_scenarios.py defines the scenarios and reads the results.
Everything is deterministic for a given seed.
"""
from __future__ import annotations

import bisect
import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Iterable

# ----------------------------------------------------------------- noise model
# docs/detection.md, "Noise". A figure is level x (1 + e), e Gaussian with
# standard deviation NOISE_SD, plus the outliers: one figure per series about
# once a day (24 h +-25% apart), +15% latency / -15% bandwidth (the bad
# direction). NOISE_SD is the noise the alerts promise to stand: 2% latency
# (the busy build machine published 2.2% with 8x shorter samples, idle
# machines 1.0-1.5%) and 4% bandwidth (3.1% measured for read on the busy
# build machine, 3-5% on busy hosts).
# The measured tails beyond the daily outlier (3.4% of the read figures more
# than 10% low) are not modelled; "Limits" again.
# Peak bandwidth (a node's CPUs streaming at once, probes.peak_bandwidth):
# 2.5%, the middle of the 2-3% its threshold assumes for an idle node (no
# server has measured it yet). With the daily outlier, a quarter of its
# figures 6 h apart, and its -8% band, 3% gives 0.22 false alarms per 100
# series-weeks, 2.5% 0.012 (bench/peak_band.py; docs/detection.md, "The peak
# bandwidth alert").
NOISE_SD = {"latency": 0.020, "bandwidth": 0.040, "peak": 0.025}
OUTLIER_FACTOR = {"latency": 1.15, "bandwidth": 0.85, "peak": 0.85}
# What the daemon publishes as the recent median (daemon/serve/results/series_history.h):
# the median of a series' last RECENT_WINDOW figures; a figure beyond its band
# around the baseline (BAND, in the bad direction) while that median is inside
# it is measured CONFIRM_RUNS more times next, each run CONFIRM_GAP_S after
# the previous one (each is a visit of its own, round_tasks.h: the duty-cycle
# budget's pause after one run, 0.5-2 min at the default budget).
RECENT_WINDOW = 5
CONFIRM_RUNS = RECENT_WINDOW - 1
# The peer comparison's ratio is of the medians of the last PEER_WINDOW
# figures (SeriesHistory::kPeerWindow), which the daemon does not publish.
PEER_WINDOW = 9
BAND = {"latency": 0.05, "bandwidth": 0.10, "peak": 0.08}
CONFIRM_GAP_S = (30, 120)
# Measured deviations from the median (run 1, write bandwidth): a second mode
# 24-30% low in 11% of the figures. Only for the "saturated_write" experiment.
WRITE_SATURATED = [-0.30, -0.29, -0.26, -0.24, -0.24, -0.24, -0.24, -0.16, -0.13, -0.11, -0.09, -0.09, -0.09,
                   -0.08, -0.08, -0.08, -0.06, -0.05, -0.05, -0.04, -0.03, -0.03, -0.03, -0.02, -0.02, -0.02,
                   -0.01, -0.01, -0.01, -0.01, 0.00, 0.00, 0.00, 0.00, 0.01, 0.01, 0.03, 0.03, 0.03, 0.04, 0.04,
                   0.04, 0.05, 0.06, 0.06, 0.06, 0.06, 0.07, 0.07, 0.08, 0.09, 0.09, 0.09, 0.10, 0.10, 0.10, 0.11,
                   0.12, 0.12, 0.14, 0.19, 0.20]
# Share of a series' runs that are disturbed and publish nothing that round.
MISSED_RUN_SHARE = 0.01
# Failed scrapes per host and day; each lasts 1, 2 or 3 scrapes.
FAILED_SCRAPES_PER_DAY = 4
# Rounds the daemon records a baseline from (median; spread exported):
# config/numaprobe.yaml baseline.rounds.
BASELINE_ROUNDS = 15
# Spread of the remote/local ratio between healthy hosts of one CPU model
# (standard deviation, clipped at 2 sd). An assumption, not a measurement: see
# docs/detection.md.
COHORT_RATIO_SD = 0.015

STEP_S = 60  # scrape and evaluation interval of the tests
KERNEL_OLD, KERNEL_NEW = "6.1.0-18-amd64", "6.6.13-amd64"
OPS = ("read", "write", "copy")
LATENCY_BASE = {"local": 95e-9, "remote": 140e-9}
BANDWIDTH_BASE = {"read": 20e9, "write": 12e9, "copy": 16e9}
REMOTE_BANDWIDTH = 0.55
# Peak bandwidth: its ops, a node's peak (remote pairs: the link's share), its
# default interval, and the pause of its own CPU budget between two of its
# runs (probes.peak_bandwidth.duty_cycle 0.01 after a run of ~1 CPU second).
PEAK_OPS = ("read", "write")
PEAK_BASE = {"read": 200e9, "write": 140e9}
PEAK_REMOTE = 0.45
PEAK_INTERVAL_S = 6 * 3600
PEAK_GAP_S = (60, 180)


def kernel_weight_reduction(mib: dict[int, int]) -> dict[int, int]:
    """The kernel's reduction of bandwidths to interleave weights
    (mm/mempolicy.c reduce_interleave_weights; KernelWeightReduction)."""
    total = sum(mib.values())
    w = {n: (32 * b) // total if b and total < 32 * b else 1 for n, b in mib.items()}
    g = math.gcd(*w.values())
    return {n: v // g for n, v in w.items()}


def interleaved(weights: dict[int, int], bw: dict[int, float]) -> float:
    """Bandwidth of an interleaved stream: the node that fills first bounds it."""
    total = sum(weights.values())
    return min(bw[n] * total / w for n, w in weights.items() if w > 0)


@dataclass
class Host:
    name: str
    cpu_model: str = "Xeon Gold 6338"
    refresh_s: int = 300
    jitter: float = 0.2
    per_cpu: bool = False  # two CPUs per node measure, latency gains a cpu label
    threads: int = 1  # > 1: bandwidth series carry threads="<n>"
    ratio_offset: float | None = None  # remote latency vs cohort; None: drawn from COHORT_RATIO_SD
    start_s: int | None = None  # daemon start; None: running long before the scenario
    # > 1: the daemon rotates pairs (daemon/serve/rotation.h): the first pair of
    # each class in round order (local (0,0), remote (1,0)) every round, the
    # other two once every rotation_rounds rounds; the exported refresh
    # interval is refresh_s x rotation_rounds.
    rotation_rounds: int = 1
    job: str = "numaprobe"
    origin: str = "restored"
    # probes.peak_bandwidth: None off (the default), else its interval. Each
    # node's own memory and the other node, read and write; a cycle at the
    # first round after a start, then one every interval; a run whose node the
    # idle gate finds busy (a share peak_busy of the checks) is skipped and
    # tried again at the next round.
    peak_interval_s: int | None = None
    peak_busy: float = 0.1
    # The kernel's weighted interleave weights by node (Linux 6.9+), None
    # before 6.9: with peak figures, numaprobe_interleave_bandwidth_ratio.
    interleave_weights: dict[int, int] | None = None
    # Filled by the scenario:
    restarts: list[int] = field(default_factory=list)

    @property
    def instance(self) -> str:
        return f"{self.name}:10062"


@dataclass
class Step:
    """From at_s on, figures of the matching series are multiplied by factor."""
    host: str
    at_s: int
    kind: str  # latency | bandwidth | peak
    factor: float
    pairs: set[tuple[int, int]] | None = None  # (cpu_node, mem_node); None: all
    ops: set[str] | None = None


@dataclass
class Reboot:
    """The host reboots at at_s (down for down_s); fingerprint fields change."""
    host: str
    at_s: int
    down_s: int = 240
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (field, before, after)


@dataclass
class Stop:
    """From at_s on, a probe of one pair fails every run with result."""
    host: str
    at_s: int
    probe: str  # latency | bandwidth | peak_bandwidth
    pair: tuple[int, int]
    result: str = "timeout"  # or placement_mismatch (figure withdrawn at once)


@dataclass
class Origin:
    """numaprobe_baseline_info changes to this origin (and fingerprint) at at_s."""
    host: str
    at_s: int
    origin: str
    fingerprint: str


@dataclass
class Accept:
    """`numaprobe baseline accept` (or baseline.accept_changes) at at_s: every
    series takes the level measured since the host's latest change (its last
    start with changed fingerprint fields since the baseline, or the last
    accept) as its baseline, at once where it has RECENT_WINDOW such figures,
    else once it has (SeriesBaseline.accept); the host changes are cleared
    and the origin becomes "accepted"."""
    host: str
    at_s: int


@dataclass
class Fault:
    """A health fault from at_s on: duty (cycle over budget), reload (failed),
    down (exporter unreachable until until_s), gone (target vanishes),
    recording (every series records its baseline again, e.g. after
    `numaprobe baseline reset`, and never gathers the figures to arm it),
    memory_errors (EDAC counts uncorrected errors, beside corrected ones),
    state_write (the state file cannot be written: every 5-s retry fails),
    features_write (the node feature file cannot be written: every 30-s retry fails)."""
    host: str
    at_s: int
    kind: str
    until_s: int | None = None


@dataclass
class SeriesData:
    labels: dict[str, str]
    tokens: list  # per scrape: float, None (no sample) or "stale"

    def selector(self) -> str:
        name = self.labels["__name__"]
        inner = ",".join(f'{k}="{v}"' for k, v in self.labels.items() if k != "__name__")
        return f"{name}{{{inner}}}"

    def values(self) -> str:
        return encode(self.tokens)


def fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def encode(tokens: list) -> str:
    """promtool's expanding notation: `vxN` is N+1 copies, `_xN` N blanks."""
    out = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        j = i
        while j + 1 < n and tokens[j + 1] == t and t != "stale":
            j += 1
        run = j - i + 1
        if t is None:
            out.append("_" if run == 1 else f"_x{run}")
        elif t == "stale":
            out.append("stale")
        else:
            out.append(fmt(t) if run == 1 else f"{fmt(t)}x{run - 1}")
        i = j + 1
    return " ".join(out)


def noise(rng: random.Random, kind: str, model: str = "measured") -> float:
    """Relative deviation of one figure from its level."""
    if model == "write_saturated" and kind == "bandwidth":
        return rng.choice(WRITE_SATURATED)
    return rng.gauss(0, NOISE_SD[kind])


def baseline(rng: random.Random, kind: str, level: float, model: str) -> tuple[float, float]:
    """The daemon's baseline: median of BASELINE_ROUNDS figures, and their
    (max - min) / median."""
    figs = sorted(level * (1 + noise(rng, kind, model)) for _ in range(BASELINE_ROUNDS))
    med = figs[len(figs) // 2]
    return med, (figs[-1] - figs[0]) / med


class SeriesBaseline:
    """One series' baseline as the daemon keeps it (daemon/serve/results/
    series_history.h): armed with a value and spread, or, after an accept that
    found too few figures of the new level, recording until it has
    RECENT_WINDOW of them. Collects what the daemon publishes of it: the
    baseline and spread (absent while recording) and its state for
    numaprobe_baseline_series and the recording progress."""

    def __init__(self, value: float, spread: float, refresh_s: float):
        self.value: float | None = value
        self.refresh_s = refresh_s  # how often the series gets a figure: the recording's expected length
        self.recording: list[float] | None = None
        self.since = 0.0
        self.values: list = [(-1e9, value)]
        self.spreads: list = [(-1e9, spread)]
        self.states: list = [(-1e9, None, None)]  # (t, figures recorded or None when armed, recording since)

    def _arm(self, t: float, figures: list[float]) -> None:
        """Median and (max - min) / median, as kernels::Summarize (mean of
        the middle two of an even count)."""
        med = statistics.median(figures)
        self.value, self.recording = med, None
        self.values.append((t, med))
        self.spreads.append((t, (max(figures) - min(figures)) / med))
        self.states.append((t, None, None))

    def accept(self, t: float, change_at: float | None, recent: list[tuple[float, float]]) -> None:
        """At an accept at t: `change_at` the host's latest change, `recent`
        the (time, figure) of the recent window (the last PEER_WINDOW figures).
        The figures at or after it (none: the last RECENT_WINDOW) are the new
        level (SeriesHistory::AcceptLevel)."""
        level = [v for tv, v in recent if tv >= change_at] if change_at is not None else \
            [v for _, v in recent[-RECENT_WINDOW:]]
        if len(level) >= RECENT_WINDOW:
            self._arm(t, level)
            return
        self.value, self.recording, self.since = None, level, t
        self.values.append((t, None))
        self.spreads.append((t, None))
        self.states.append((t, len(level), t))

    def add(self, t: float, v: float) -> None:
        """A figure lands: a recording after an accept arms at RECENT_WINDOW."""
        if self.recording is None:
            return
        self.recording.append(v)
        if len(self.recording) >= RECENT_WINDOW:
            self._arm(t, self.recording)
        else:
            self.states.append((t, len(self.recording), self.since))

    def state_at(self, t: float) -> tuple:
        return self.states[bisect.bisect_right([s[0] for s in self.states], t) - 1]


@dataclass
class SeriesRun:
    """What figure_series gives for one series: event lists of its figures,
    recent median, peer median and last success, its run results and its
    baseline."""
    fig: list
    med: list
    peer: list
    succ: list
    runs: list
    baseline: SeriesBaseline


class HostSim:
    """Everything one host's daemon publishes, sampled every STEP_S."""

    def __init__(self, scn: "Scenario", host: Host, rng: random.Random):
        self.scn, self.h, self.rng = scn, host, rng
        self.n = scn.duration_s // STEP_S + 1
        self.nodes = (0, 1)
        self.pairs = [(c, m) for c in self.nodes for m in self.nodes]
        if host.ratio_offset is None:
            host.ratio_offset = max(-2 * COHORT_RATIO_SD, min(2 * COHORT_RATIO_SD, rng.gauss(0, COHORT_RATIO_SD)))
        self.level = 1 + rng.gauss(0, 0.02)  # hosts of a model differ a little overall
        self.reboots = sorted((r for r in scn.reboots if r.host == host.name), key=lambda r: r.at_s)
        self.scrape_ok = self._scrapes()
        self.segments = self._segments()  # daemon lifetimes: (start, end)
        gone = self.gone_at()
        # Per scrape: 0 scraped, 1 scrape failed, 2 daemon not running or target gone.
        self.state = [2 if (i * STEP_S >= gone or not self.running(i * STEP_S)) else (0 if ok else 1)
                      for i, ok in enumerate(self.scrape_ok)]
        self.accepts = self._accepts()
        self.series: list[SeriesData] = []
        self.baselines: list[SeriesBaseline] = []  # every series', for numaprobe_baseline_series
        # The latency peer medians (not published): what _peer_ratio reads.
        self.peer_medians: list[SeriesData] = []

    # ------------------------------------------------------------ timelines
    def _scrapes(self) -> list[bool]:
        ok = [True] * self.n
        day = 86400 / STEP_S
        k = 0
        while True:
            k += self.rng.expovariate(FAILED_SCRAPES_PER_DAY / day)
            if k >= self.n:
                break
            for d in range(self.rng.choices((1, 2, 3), (0.7, 0.2, 0.1))[0]):
                if int(k) + d < self.n:
                    ok[int(k) + d] = False
        for r in self.reboots:
            for i in range(self.n):
                if r.at_s <= i * STEP_S < r.at_s + r.down_s:
                    ok[i] = False
        for f in self.scn.faults:
            if f.host == self.h.name and f.kind == "down":
                for i in range(self.n):
                    if f.at_s <= i * STEP_S < (f.until_s or 10**12):
                        ok[i] = False
        return ok

    def _segments(self) -> list[tuple[float, float]]:
        start = self.h.start_s if self.h.start_s is not None else -6 * self.h.refresh_s
        segs, s = [], start
        for r in self.reboots:
            segs.append((s, r.at_s))
            s = r.at_s + r.down_s
        segs.append((s, self.scn.duration_s + 1))
        return segs

    def change_times(self) -> list[float]:
        """When the daemon first saw each reboot's changed fingerprint fields:
        at its start."""
        return [r.at_s + r.down_s for r in self.reboots if r.changes]

    def _accepts(self) -> list[tuple[float, float | None]]:
        """(accept time, the latest host change since the baseline or the
        previous accept, None if none) of the host's accepts. The daemon acts
        on an accept while it runs."""
        out, prev = [], -math.inf
        for a in sorted(a.at_s for a in self.scn.accepts if a.host == self.h.name):
            if not self.running(a):
                raise ValueError(f"accept at {a} s on {self.h.name}: its daemon is not running then")
            out.append((a, max((c for c in self.change_times() if prev < c <= a), default=None)))
            prev = a
        return out

    def rounds(self, seg: tuple[float, float]) -> list[float]:
        R, j = self.h.refresh_s, self.h.jitter
        t, out = seg[0] + self.rng.uniform(0, 20), []
        while t < seg[1]:
            out.append(t)
            t += R * self.rng.uniform(1 - j, 1 + j)
        return out

    def gone_at(self) -> float:
        return min((f.at_s for f in self.scn.faults if f.host == self.h.name and f.kind == "gone"), default=math.inf)

    # ------------------------------------------------------------- sampling
    def sample(self, events: list[tuple[float, object]], default=None) -> list:
        """Gauge as scraped: the latest event value at or before each scrape.
        A failed scrape, a stopped daemon or a withdrawn value (None) gives a
        staleness marker after a sample, nothing otherwise."""
        events = sorted(events, key=lambda e: e[0])
        out, k, last_is_value = [None] * self.n, -1, False
        for i, st in enumerate(self.state):
            t = i * STEP_S
            while k + 1 < len(events) and events[k + 1][0] <= t:
                k += 1
            v = (events[k][1] if k >= 0 else default) if st == 0 else None
            if v is None:
                out[i] = "stale" if last_is_value else None
                last_is_value = False
            else:
                out[i] = v
                last_is_value = True
        return out

    def running(self, t: float) -> bool:
        return any(a <= t < b for a, b in self.segments)

    def log_figures(self, name: str, labels: dict, events: list) -> None:
        """Publication times of a figure series, for time-to-fire references."""
        key = (name, self.h.instance, tuple(sorted(labels.items())))
        self.scn.figure_log[key] = [t for t, v in events if v is not None]

    def add(self, name: str, labels: dict, events: list[tuple[float, object]], default=None) -> None:
        base = {"__name__": name, "job": self.h.job, "instance": self.h.instance}
        self.series.append(SeriesData({**base, **labels}, self.sample(events, default)))

    # -------------------------------------------------------------- figures
    def factor(self, kind: str, pair, op, t: float) -> float:
        f = 1.0
        for s in self.scn.steps:
            if s.host == self.h.name and s.kind == kind and t >= s.at_s \
                    and (s.pairs is None or pair in s.pairs) and (s.ops is None or op in s.ops):
                f *= s.factor
        return f

    def stop_for(self, probe: str, pair) -> Stop | None:
        return next((s for s in self.scn.stops if s.host == self.h.name and s.probe == probe and s.pair == pair), None)

    def outlier_times(self) -> list[float]:
        t, out = self.rng.uniform(0, 86400), []
        while t < self.scn.duration_s:
            out.append(t)
            t += 86400 * self.rng.uniform(0.75, 1.25)
        return out

    def pair_rounds(self, pair, round_lists):
        """The rounds that measure `pair`: all of them, or with rotation one in
        rotation_rounds (the rotated pairs (0,1) and (1,1) in different slices)."""
        k = self.h.rotation_rounds
        if k == 1 or pair in ((0, 0), (1, 0)):
            return round_lists
        slot = (0 if pair == (0, 1) else 1) * k // 2
        return [[r for i, r in enumerate(rounds) if i % k == slot] for rounds in round_lists]

    def refresh_of(self, pair) -> float:
        """How often a series of the rounds gets a figure: every round, or
        for a rotated pair once a cycle (the daemon's RefreshOf)."""
        rotated = self.h.rotation_rounds > 1 and pair not in ((0, 0), (1, 0))
        return self.h.refresh_s * (self.h.rotation_rounds if rotated else 1)

    def figure_series(self, kind: str, pair, op, true_level: float, round_lists, offset: float,
                      baseline: SeriesBaseline, rotate: bool = True) -> SeriesRun:
        """Figure, recent-median and last-success events of one series, and the
        run results: the daemon's rounds (or, `rotate` False, the run times
        given), and its confirmation runs after a figure that leaves its band
        around the baseline in force (none while it records). The host's
        accepts change `baseline` as its figures go."""
        self.baselines.append(baseline)
        if rotate:
            round_lists = self.pair_rounds(pair, round_lists)
        outliers = self.outlier_times()
        stop = self.stop_for({"latency": "latency", "bandwidth": "bandwidth", "peak": "peak_bandwidth"}[kind], pair)
        sign = 1 if kind == "latency" else -1
        fig_ev, med_ev, peer_ev, succ_ev, runs = [], [], [], [], []

        def worse(v):
            return sign * (v / baseline.value - 1)

        accepts = list(self.accepts)
        for seg, rounds in zip(self.segments, round_lists):
            # The recent window starts empty at each start, as the recent
            # medians do here; an accept's figures since a change are all of
            # this start's anyway (the change is seen at the start).
            figs, fails, confirm, recent = [], 0, [], []
            queue = [r + offset for r in rounds]
            while queue or confirm:
                confirming = bool(confirm) and (not queue or confirm[0] < queue[0])
                t = confirm.pop(0) if confirming else queue.pop(0)
                if t >= seg[1]:
                    break
                while accepts and accepts[0][0] <= t:
                    baseline.accept(*accepts.pop(0), recent)
                if stop and t >= stop.at_s:
                    fails += 1
                    runs.append((t, stop.result))
                    if stop.result.startswith("placement") or fails == 3:
                        fig_ev.append((t, None))
                        med_ev.append((t, None))
                        peer_ev.append((t, None))
                    continue
                if self.rng.random() < MISSED_RUN_SHARE:
                    runs.append((t, "disturbed"))
                    continue
                v = true_level * self.factor(kind, pair, op, t) * (1 + noise(self.rng, kind, self.scn.noise))
                if outliers and t >= outliers[0]:
                    outliers.pop(0)
                    v *= OUTLIER_FACTOR[kind]
                median = sorted(figs[-RECENT_WINDOW:])[RECENT_WINDOW // 2] if len(figs) >= RECENT_WINDOW else None
                if not confirming and baseline.value is not None and worse(v) > BAND[kind] \
                        and (median is None or worse(median) <= BAND[kind]):
                    c = t
                    for _ in range(CONFIRM_RUNS):
                        c += self.rng.uniform(*CONFIRM_GAP_S)
                        confirm.append(c)
                figs.append(v)
                recent = (recent + [(t, v)])[-PEER_WINDOW:]
                baseline.add(t, v)
                fig_ev.append((t, v))
                if len(figs) >= RECENT_WINDOW:
                    med_ev.append((t, sorted(figs[-RECENT_WINDOW:])[RECENT_WINDOW // 2]))
                if len(figs) >= PEER_WINDOW:
                    peer_ev.append((t, sorted(figs[-PEER_WINDOW:])[PEER_WINDOW // 2]))
                succ_ev.append((t, float(int(t))))
                runs.append((t, "ok"))
            while accepts and accepts[0][0] < seg[1]:  # after the segment's last figure
                baseline.accept(*accepts.pop(0), recent)
            if seg[1] <= self.scn.duration_s:  # daemon stops: everything withdrawn
                fig_ev.append((seg[1], None))
                med_ev.append((seg[1], None))
                peer_ev.append((seg[1], None))
                succ_ev.append((seg[1], None))
        return SeriesRun(fig_ev, med_ev, peer_ev, succ_ev, runs, baseline)

    @staticmethod
    def distance(pair) -> int:
        return 10 if pair[0] == pair[1] else 21

    def cohort_labels(self) -> dict:
        """What the daemon puts on numaprobe_host_info and the peer ratios
        (metrics_peers.cc): CPU model, CPU nodes with local memory, the sum
        of the SLIT matrix."""
        return {"cpu_model": self.h.cpu_model,
                "numa_nodes": str(sum(1 for p in self.pairs if self.distance(p) == 10)),
                "numa_distance_sum": str(sum(self.distance(p) for p in self.pairs))}

    def build(self) -> list[SeriesData]:
        h, rng = self.h, self.rng
        round_lists = [self.rounds(seg) for seg in self.segments]
        n_series = len(self.pairs) * (1 + len(OPS))
        spread = 0.1 if h.refresh_s <= 600 else 0.9  # share of a round its probes take
        idx = 0
        runs_by_probe: dict[str, list] = {"latency": [], "bandwidth": [], "core_to_core": []}
        ratio_figs: dict = {}

        def offset():
            nonlocal idx
            idx += 1
            return spread * h.refresh_s * idx / n_series

        for pair in self.pairs:
            c, m = pair
            local = c == m
            level = LATENCY_BASE["local" if local else "remote"] * self.level
            if not local:
                level *= 1 + h.ratio_offset
            cpus = [None] if not h.per_cpu else [2 * c, 2 * c + 1]
            off = offset()
            succ_any = None
            for cpu in cpus:
                lab = {"cpu_node": str(c), "mem_node": str(m)}
                if cpu is not None:
                    lab["cpu"] = str(cpu)
                true = level * (1 + rng.gauss(0, 0.003) if cpu is not None else 1)
                value, spread = baseline(rng, "latency", true, self.scn.noise)
                base = SeriesBaseline(value, spread, self.refresh_of(pair))
                run = self.figure_series("latency", pair, None, true, round_lists, off + (cpu or 0) % 2 * 3, base)
                self.peer_medians.append(SeriesData({"__name__": "peer_median", **lab}, self.sample(run.peer)))
                self.log_figures("numaprobe_memory_latency_seconds", lab, run.fig)
                ratio_figs[(pair, cpu)] = run.fig
                self.add("numaprobe_memory_latency_seconds", lab, run.fig)
                self.add("numaprobe_memory_latency_recent_median_seconds", lab, run.med)
                self.add("numaprobe_memory_latency_baseline_seconds", lab, base.values)
                self.add("numaprobe_memory_latency_baseline_spread_ratio", lab, base.spreads)
                runs_by_probe["latency"] += run.runs
                succ_any = run.succ if succ_any is None else sorted(succ_any + run.succ, key=lambda e: e[0])
            self.add("numaprobe_probe_last_success_timestamp_seconds",
                     {"probe": "latency", "cpu_node": str(c), "mem_node": str(m)}, succ_any)
            self.add("numaprobe_numa_distance", {"cpu_node": str(c), "mem_node": str(m)},
                     [(-1e9, float(self.distance(pair)))])
            bw_succ = []
            for op in OPS:
                lab = {"cpu_node": str(c), "mem_node": str(m), "op": op}
                if h.threads > 1:
                    lab["threads"] = str(h.threads)
                true = BANDWIDTH_BASE[op] * self.level * (1 if local else REMOTE_BANDWIDTH)
                value, spread = baseline(rng, "bandwidth", true, self.scn.noise)
                base = SeriesBaseline(value, spread, self.refresh_of(pair))
                run = self.figure_series("bandwidth", pair, op, true, round_lists, offset(), base)
                self.log_figures("numaprobe_memory_bandwidth_bytes_per_second", lab, run.fig)
                self.add("numaprobe_memory_bandwidth_bytes_per_second", lab, run.fig)
                self.add("numaprobe_memory_bandwidth_recent_median_bytes_per_second", lab, run.med)
                lab_b = {k: v for k, v in lab.items() if k != "threads"}
                self.add("numaprobe_memory_bandwidth_baseline_bytes_per_second", lab_b, base.values)
                self.add("numaprobe_memory_bandwidth_baseline_spread_ratio", lab_b, base.spreads)
                runs_by_probe["bandwidth"] += run.runs
                bw_succ += run.succ
            self.add("numaprobe_probe_last_success_timestamp_seconds",
                     {"probe": "bandwidth", "cpu_node": str(c), "mem_node": str(m)},
                     sorted(bw_succ, key=lambda e: (e[0], e[1] is None)))
        self._ratio(ratio_figs)
        self._c2c(round_lists, runs_by_probe)
        self._health(round_lists, runs_by_probe)
        # After every other draw of the host's generator: a host without
        # peak bandwidth gets the same series as before it was modelled.
        self._peak(round_lists)
        self._baselines()
        self._oldest_success()
        self._worst_drift()
        self._peer_ratio()
        return self.series

    def _ratio(self, figs: dict) -> None:
        """numaprobe_memory_latency_remote_local_ratio from the latest figures."""
        for (pair, cpu), ev in figs.items():
            c, m = pair
            local = figs[((c, c), cpu)]
            lt = [e[0] for e in local]
            out = []
            for t, v in ev:
                k = bisect.bisect_right(lt, t) - 1
                lv = local[k][1] if k >= 0 else None
                out.append((t, None if v is None or lv is None else v / lv))
            lab = {"cpu_node": str(c), "mem_node": str(m)}
            if cpu is not None:
                lab["cpu"] = str(cpu)
            self.add("numaprobe_memory_latency_remote_local_ratio", lab, out)

    def _oldest_success(self) -> None:
        """numaprobe_probe_oldest_success_timestamp_seconds: per probe, the
        oldest of the pairs' last-success timestamps the daemon publishes at
        that moment (metrics_health.cc), so from the same scrapes: a failed
        scrape leaves it stale too, a withdrawn pair no longer counts."""
        by_probe: dict[str, list[SeriesData]] = {}
        for sd in self.series:
            if sd.labels["__name__"] == "numaprobe_probe_last_success_timestamp_seconds":
                by_probe.setdefault(sd.labels["probe"], []).append(sd)
        for probe, pairs in sorted(by_probe.items()):
            def oldest(i: int, pairs=pairs) -> float | None:
                values = [p.tokens[i] for p in pairs if isinstance(p.tokens[i], (int, float))]
                return min(values) if values else None
            self.add_derived("numaprobe_probe_oldest_success_timestamp_seconds", {"probe": probe}, oldest)

    def add_derived(self, name: str, labels: dict, value_at) -> None:
        """A series the daemon computes from its other series at each scrape:
        value_at(i) from the scrape-i tokens, None where it has nothing (a
        staleness marker after a sample, as `sample` writes)."""
        out, last_is_value = [], False
        for i in range(self.n):
            v = value_at(i)
            out.append(v if v is not None else ("stale" if last_is_value else None))
            last_is_value = v is not None
        base = {"__name__": name, "job": self.h.job, "instance": self.h.instance}
        self.series.append(SeriesData({**base, **labels}, out))

    def by_pair(self, name: str, series: list[SeriesData] | None = None) -> dict[tuple, list[SeriesData]]:
        """The series of `name` (in self.series, or `series`) by (cpu_node,
        mem_node, op): in per-CPU mode several a pair."""
        out: dict[tuple, list[SeriesData]] = {}
        for sd in self.series if series is None else series:
            if sd.labels["__name__"] == name:
                lab = sd.labels
                out.setdefault((lab["cpu_node"], lab["mem_node"], lab.get("op", "")), []).append(sd)
        return out

    @staticmethod
    def node_median(series: list[SeriesData], i: int) -> float | None:
        """At scrape i, the median over a pair's CPUs, as the daemon reduces them."""
        values = [sd.tokens[i] for sd in series if isinstance(sd.tokens[i], (int, float))]
        return statistics.median(values) if values else None

    def _worst_drift(self) -> None:
        """numaprobe_memory_{latency,bandwidth}_worst_pair_drift_ratio: the
        worst pair's recent median over its baseline as the daemon publishes
        it (metrics_drift.cc): per pair the median over its CPUs of each
        side, then the highest (latency) or lowest (bandwidth, per op) ratio;
        from the same scrapes, so a failed scrape leaves it stale too."""
        for kind, unit, worst in (("latency", "seconds", max), ("bandwidth", "bytes_per_second", min),
                                  ("peak_bandwidth", "bytes_per_second", min)):
            recent = self.by_pair(f"numaprobe_memory_{kind}_recent_median_{unit}")
            base = self.by_pair(f"numaprobe_memory_{kind}_baseline_{unit}")
            for op in sorted({key[2] for key in recent}):
                def worst_at(i: int, op=op, recent=recent, base=base, worst=worst) -> float | None:
                    ratios = []
                    for key, series in recent.items():
                        r, b = self.node_median(series, i), self.node_median(base.get(key, []), i)
                        if key[2] == op and r is not None and b:
                            ratios.append(r / b)
                    return worst(ratios) if ratios else None
                self.add_derived(f"numaprobe_memory_{kind}_worst_pair_drift_ratio", {"op": op} if op else {},
                                 worst_at)

    def _peer_ratio(self) -> None:
        """numaprobe_memory_latency_recent_remote_local_ratio: per remote
        pair, its peer median (of PEER_WINDOW figures) over its CPU node's
        local pair's (each the median over the CPUs), with the cohort labels,
        as the daemon publishes it (metrics_peers.cc); from the same scrapes."""
        peer = self.by_pair("peer_median", self.peer_medians)
        for (c, m, op), series in sorted(peer.items()):
            local = peer.get((c, c, op))
            if c == m or local is None:
                continue
            def ratio_at(i: int, series=series, local=local) -> float | None:
                r, lv = self.node_median(series, i), self.node_median(local, i)
                return r / lv if r is not None and lv else None
            self.add_derived("numaprobe_memory_latency_recent_remote_local_ratio",
                             {**self.cohort_labels(), "cpu_node": c, "mem_node": m}, ratio_at)

    def _peak(self, round_lists) -> None:
        """probes.peak_bandwidth on its own schedule: its figures, recent
        medians (confirmed like the others: a figure more than 10% under its
        baseline is measured 4 more times at once), baselines, last successes
        and runs by result, skipped ones included."""
        h, rng = self.h, self.rng
        if not h.peak_interval_s:
            return
        targets = [(pair, op) for pair in self.pairs for op in PEAK_OPS]
        run_lists: dict[tuple, list[list[float]]] = {tg: [] for tg in targets}
        skipped: list[float] = []
        for seg, rounds in zip(self.segments, round_lists):
            times: dict[tuple, list[float]] = {tg: [] for tg in targets}
            pending: list[tuple] = []
            cycle = None
            for r in rounds:
                if cycle is None or r >= cycle + h.peak_interval_s:
                    cycle = r
                    pending += [tg for tg in targets if tg not in pending]
                t, left = r + rng.uniform(10, 30), []  # at the round's end, paced by its budget
                for tg in pending:
                    if t >= seg[1]:
                        left.append(tg)
                    elif rng.random() < h.peak_busy:
                        skipped.append(t)
                        left.append(tg)
                    else:
                        times[tg].append(t)
                        t += rng.uniform(*PEAK_GAP_S)
                pending = left
            for tg in targets:
                run_lists[tg].append(times[tg])
        runs: list = [(t, "skipped") for t in skipped]
        succ_by_pair: dict[tuple, list] = {}
        figures: dict[tuple, list] = {}
        for pair, op in targets:
            c, m = pair
            lab = {"cpu_node": str(c), "mem_node": str(m), "op": op}
            true = PEAK_BASE[op] * self.level * (1 if c == m else PEAK_REMOTE)
            base = SeriesBaseline(*baseline(rng, "peak", true, self.scn.noise), h.peak_interval_s)
            run = self.figure_series("peak", pair, op, true, run_lists[(pair, op)], 0.0, base, rotate=False)
            self.log_figures("numaprobe_memory_peak_bandwidth_bytes_per_second", lab, run.fig)
            self.add("numaprobe_memory_peak_bandwidth_bytes_per_second", lab, run.fig)
            figures[(pair, op)] = run.fig
            self.add("numaprobe_memory_peak_bandwidth_recent_median_bytes_per_second", lab, run.med)
            self.add("numaprobe_memory_peak_bandwidth_baseline_bytes_per_second", lab, base.values)
            self.add("numaprobe_memory_peak_bandwidth_baseline_spread_ratio", lab, base.spreads)
            succ_by_pair.setdefault(pair, []).extend(run.succ)
            runs += run.runs
        if h.interleave_weights:
            self._interleave(figures)
        for (c, m), succ in sorted(succ_by_pair.items()):
            self.add("numaprobe_probe_last_success_timestamp_seconds",
                     {"probe": "peak_bandwidth", "cpu_node": str(c), "mem_node": str(m)},
                     sorted(succ, key=lambda e: (e[0], e[1] is None)))
        for result in sorted({"ok", "disturbed", "skipped"} | {r for _, r in runs}):
            self._counter("numaprobe_probe_runs_total", {"probe": "peak_bandwidth", "result": result},
                          [t for t, r in runs if r == result])

    def _interleave(self, figures: dict) -> None:
        """numaprobe_interleave_bandwidth_ratio per CPU node, as
        daemon/output/interleave_weights.cc computes it from the latest peak
        figures: the kernel's weights against its own reduction of each
        node's min(read, write) from its nearest CPU node (here its own: every
        node has CPUs), both on the CPU node's min(read, write) to each node;
        absent until every figure it needs exists."""
        nodes = sorted({m for (c, m), _ in figures})
        for c in sorted({c for (c, _m), _ in figures}):
            keys = [((c, m), op) for m in nodes for op in PEAK_OPS] + \
                [((m, m), op) for m in nodes if m != c for op in PEAK_OPS]
            events_by_key = {k: figures.get(k, []) for k in keys}
            times = sorted({t for ev in events_by_key.values() for t, _ in ev})
            latest: dict = {}
            events = []
            for t in times:
                for k, ev in events_by_key.items():
                    for et, v in ev:
                        if et == t:
                            latest[k] = v
                if all(latest.get(k) is not None for k in keys):
                    mine = {m: min(latest[((c, m), op)] for op in PEAK_OPS) for m in nodes}
                    local = {m: min(latest[((m, m), op)] for op in PEAK_OPS) for m in nodes}
                    nearest = kernel_weight_reduction({m: int(v / 2**20) for m, v in local.items()})
                    events.append((t, interleaved(self.h.interleave_weights, mine) / interleaved(nearest, mine)))
                else:
                    events.append((t, None))
            self.add("numaprobe_interleave_bandwidth_ratio", {"cpu_node": str(c)}, events)

    def _c2c(self, round_lists, runs_by_probe) -> None:
        for pair in ((0, 0), (0, 1)):
            ev = []
            for seg, rounds in zip(self.segments, round_lists):
                for r in rounds:
                    t = r + 0.05 * self.h.refresh_s
                    if t < seg[1]:
                        ev.append((t, float(int(t))))
                        runs_by_probe["core_to_core"].append((t, "ok"))
            self.add("numaprobe_probe_last_success_timestamp_seconds",
                     {"probe": "core_to_core", "cpu_node": str(pair[0]), "mem_node": str(pair[1])}, ev)

    def _counter(self, name: str, labels: dict, times: list[float], resets: bool = True) -> None:
        """A counter bumped at each time; a daemon restart starts it at 0 again."""
        times = sorted(times)
        ev = []
        for a, b in self.segments:
            ev.append((a, 0.0))
            n = 0
            for t in times:
                if a <= t < b:
                    n += 1
                    ev.append((t, float(n)))
        self.add(name, labels, ev)

    def _health(self, round_lists, runs_by_probe) -> None:
        h, rng = self.h, self.rng
        for probe, runs in runs_by_probe.items():
            results = {"ok", "disturbed"} | {r for _, r in runs}
            for result in sorted(results):
                self._counter("numaprobe_probe_runs_total", {"probe": probe, "result": result},
                              [t for t, r in runs if r == result])
        placement = [t for p, runs in runs_by_probe.items() for t, r in runs if r == "placement_mismatch"]
        for node in map(str, self.nodes):
            stops = [s for s in self.scn.stops if s.host == h.name and s.result == "placement_mismatch"
                     and str(s.pair[1]) == node]
            self._counter("numaprobe_placement_failures_total", {"mem_node": node, "reason": "placement_mismatch"},
                          placement if stops else [])
        budget = 0.002
        duty_fault = next((f for f in self.scn.faults if f.host == h.name and f.kind == "duty"), None)
        # The daemon updates the trailing 10-min duty cycle after every probe
        # (every minute or two whatever the round length): below the budget,
        # and about once a day up to 1.45x for 10 min after a latency buffer
        # is prepared again (docs/runbook.md, NumaProbeDutyCycleOverBudget).
        duty = []
        spike = rng.uniform(0, 86400)
        for seg in self.segments:
            t = seg[0]
            while t < seg[1]:
                v = budget * rng.uniform(0.6, 1.05)
                if spike <= t < spike + 600:
                    v = budget * 1.45
                elif t >= spike + 600:
                    spike += 86400 * rng.uniform(0.75, 1.25)
                if duty_fault and t >= duty_fault.at_s:
                    v = budget * 1.6
                duty.append((t, v))
                t += rng.uniform(60, 120)
        self.add("numaprobe_duty_cycle_ratio", {}, duty)
        self.add("numaprobe_duty_cycle_budget_ratio", {}, [(-1e9, budget)])
        reload_fault = next((f for f in self.scn.faults if f.host == h.name and f.kind == "reload"), None)
        self.add("numaprobe_config_last_reload_successful", {},
                 [(-1e9, 1.0)] + ([(reload_fault.at_s, 0.0)] if reload_fault else []))
        # EDAC counts since the baseline: a healthy host has a corrected error
        # now and then (never paged); a memory_errors fault adds uncorrected
        # ones. A generator of their own: the host's other series stay the
        # draws they were before these were modelled.
        edac_rng = random.Random(f"{self.scn.seed}-{h.name}-edac")
        mem_fault = next((f for f in self.scn.faults if f.host == h.name and f.kind == "memory_errors"), None)
        corrected = [(-1e9, 0.0)]
        t = edac_rng.uniform(0, 86400)
        while t < self.scn.duration_s:
            corrected.append((t, corrected[-1][1] + 1))
            t += edac_rng.uniform(0.5, 1.5) * 86400
        self.add("numaprobe_host_memory_errors_since_baseline", {"type": "corrected"}, corrected)
        self.add("numaprobe_host_memory_errors_since_baseline", {"type": "uncorrected"},
                 [(-1e9, 0.0)] + ([(mem_fault.at_s, 1.0), (mem_fault.at_s + 20 * 60, 3.0)] if mem_fault else []))
        # The state file: written; a state_write fault fails every write (and
        # retry, 5 s apart) from at_s on.
        write_fault = next((f for f in self.scn.faults if f.host == h.name and f.kind == "state_write"), None)
        self.add("numaprobe_state_last_write_successful", {},
                 [(-1e9, 1.0)] + ([(write_fault.at_s, 0.0)] if write_fault else []))
        self._counter("numaprobe_state_write_failures_total", {},
                      [float(t) for t in range(write_fault.at_s, self.scn.duration_s, 5)] if write_fault else [])
        # The node feature file: written (or not configured: 1 as well); a
        # features_write fault fails every write (retried 30 s apart) from at_s on.
        features_fault = next((f for f in self.scn.faults if f.host == h.name and f.kind == "features_write"), None)
        self.add("numaprobe_node_features_last_write_successful", {},
                 [(-1e9, 1.0)] + ([(features_fault.at_s, 0.0)] if features_fault else []))
        self._counter("numaprobe_node_features_write_failures_total", {},
                      [float(t) for t in range(features_fault.at_s, self.scn.duration_s, 30)] if features_fault else [])
        self.add("numaprobe_refresh_interval_seconds", {}, [(-1e9, float(h.refresh_s * h.rotation_rounds))])
        self.add("numaprobe_build_info", {"version": "0.9.0", "revision": "4f3c2a1"}, [(-1e9, 1.0)])
        # Fingerprint fields and their change events.
        kernel = KERNEL_OLD
        info_ev: dict[str, list] = {}
        cur = kernel
        info_ev.setdefault(cur, []).append((-1e9, 1.0))
        for r in self.reboots:
            for fld, before, after in r.changes:
                if fld == "kernel":
                    info_ev[cur].append((r.at_s + r.down_s, None))
                    cur = after
                    info_ev.setdefault(cur, []).append((r.at_s + r.down_s, 1.0))
        for k, ev in info_ev.items():
            self.add("numaprobe_host_info", {**self.cohort_labels(), "kernel": k, "fingerprint": "f1"}, ev)
        # The changes since the baseline, each with when it was first seen, and
        # the newest as the daemon publishes it: after each reboot with
        # changes, every field whose last change came then, one label. An
        # accept clears them all.
        moments = sorted([(r.at_s + r.down_s, r.changes) for r in self.reboots if r.changes]
                         + [(a, None) for a, _ in self.accepts], key=lambda m: m[0])
        change_ev: dict[tuple, list] = {}
        newest_ev: dict[str, list] = {}
        seen: set[tuple] = set()
        last: dict[str, tuple] = {}
        newest = None
        for at, changes in moments:
            if newest is not None:
                newest_ev[newest].append((at, None))
                newest = None
            if changes is None:  # an accept
                for key in seen:
                    change_ev[key].append((at, None))
                seen.clear()
                last.clear()
                continue
            for fld, before, after in changes:
                if (fld, before, after) not in seen:
                    seen.add((fld, before, after))
                    change_ev.setdefault((fld, before, after), []).append((at, float(at)))
                last[fld] = (before, after, at)
            newest = ", ".join(f"{f} {b} -> {a}" for f, (b, a, t) in sorted(last.items()) if t == at)
            newest_ev.setdefault(newest, []).append((at, float(at)))
        for (fld, before, after), ev in change_ev.items():
            self.add("numaprobe_host_change_timestamp_seconds", {"field": fld, "before": before, "after": after}, ev)
        for change, ev in newest_ev.items():
            self.add("numaprobe_host_last_change_timestamp_seconds", {"change": change}, ev)
        # up: written by Prometheus for every scrape while the target exists.
        gone = self.gone_at()
        self.series.append(SeriesData(
            {"__name__": "up", "job": h.job, "instance": h.instance},
            [None if i * STEP_S >= gone else (1.0 if self.scrape_ok[i] else 0.0) for i in range(self.n)]))

    def _baselines(self) -> None:
        """numaprobe_baseline_series by state, the recording progress, since
        and expected arming, as DerivedFigures::Fill sums them over the
        series' baselines (SeriesBaseline: armed, or recording after an
        accept until RECENT_WINDOW figures); numaprobe_baseline_info with its
        origin. A recording fault instead sends every series back to recording
        at at_s for good, predicted armed after BASELINE_ROUNDS rounds."""
        h = self.h
        moments = sorted({st[0] for b in self.baselines for st in b.states})
        rec = next((f for f in self.scn.faults if f.host == h.name and f.kind == "recording"), None)
        if rec:
            moments = [t for t in moments if t < rec.at_s]
        armed_ev, recording_ev, progress_ev, since_ev, expected_ev = [], [], [], [], []
        for t in moments:
            recording = [(st, b) for b in self.baselines if (st := b.state_at(t))[1] is not None]
            armed_ev.append((t, float(len(self.baselines) - len(recording))))
            recording_ev.append((t, float(len(recording))))
            got = sum(min(st[1], RECENT_WINDOW) for st, _ in recording)
            progress_ev.append((t, got / (RECENT_WINDOW * len(recording)) if recording else 1.0))
            since_ev.append((t, min(st[2] for st, _ in recording) if recording else None))
            expected_ev.append((t, max(st[2] + RECENT_WINDOW * b.refresh_s for st, b in recording)
                                if recording else None))
        if rec:
            armed_ev.append((rec.at_s, 0.0))
            recording_ev.append((rec.at_s, float(len(self.baselines))))
            progress_ev.append((rec.at_s, 0.2))
            since_ev.append((rec.at_s, float(rec.at_s)))
            expected_ev.append((rec.at_s, float(rec.at_s + BASELINE_ROUNDS * h.refresh_s * h.rotation_rounds)))
        self.add("numaprobe_baseline_series", {"state": "armed"}, armed_ev)
        self.add("numaprobe_baseline_series", {"state": "recording"}, recording_ev)
        self.add("numaprobe_baseline_recording_progress_ratio", {}, progress_ev)
        if any(v is not None for _, v in since_ev):
            self.add("numaprobe_baseline_recording_since_timestamp_seconds", {}, since_ev)
            self.add("numaprobe_baseline_expected_armed_timestamp_seconds", {}, expected_ev)
        # Baseline origin: the scenario's changes of origin and fingerprint,
        # and each accept's "accepted" with the fingerprint in force.
        origins = sorted([(-1e9, (h.origin, "f1"))] + [(o.at_s, (o.origin, o.fingerprint))
                                                         for o in self.scn.origins if o.host == h.name],
                         key=lambda o: o[0])
        for a, _ in self.accepts:
            fingerprint = [v for t, v in origins if t <= a][-1][1]
            bisect.insort(origins, (a, ("accepted", fingerprint)), key=lambda o: o[0])
        keys = sorted({v for _, v in origins})
        for key in keys:
            ev = [(t, 1.0 if v == key else None) for t, v in origins]
            self.add("numaprobe_baseline_info", {"origin": key[0], "fingerprint": key[1]}, ev)

@dataclass
class Scenario:
    name: str
    hosts: list[Host]
    duration_s: int
    seed: int = 1
    steps: list[Step] = field(default_factory=list)
    reboots: list[Reboot] = field(default_factory=list)
    stops: list[Stop] = field(default_factory=list)
    origins: list[Origin] = field(default_factory=list)
    accepts: list[Accept] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    eval_s: int = STEP_S  # rule evaluation interval of the test
    noise: str = "measured"  # or write_saturated (bandwidth from the measured write figures)
    figure_log: dict = field(default_factory=dict)  # filled by series()

    def series(self) -> list[SeriesData]:
        rng = random.Random(self.seed)
        out = []
        for h in self.hosts:
            out += HostSim(self, h, random.Random(rng.random())).build()
        return out


def test_file(scn: Scenario, series: list[SeriesData], rule_files: Iterable[str], group_order: list[str],
              promql_tests: list[dict], alert_tests: list[dict]) -> dict:
    """A promtool test file (as a dict, to be written as JSON) for one scenario."""
    return {
        "rule_files": list(rule_files),
        "evaluation_interval": f"{scn.eval_s}s",
        "group_eval_order": group_order,
        "tests": [{
            "name": scn.name,
            "interval": f"{STEP_S}s",
            "input_series": [{"series": s.selector(), "values": s.values()} for s in series],
            "promql_expr_test": promql_tests,
            "alert_rule_test": alert_tests,
        }],
    }
