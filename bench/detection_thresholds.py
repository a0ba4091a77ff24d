#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Design calculation behind the drift alerts (docs/detection.md,
"Thresholds"): a Monte Carlo of what the daemon publishes and what the drift
rules decide from it, for candidate mechanisms, on the noise model of
tests/grafana/series_gen.py.

A series: figures level x (1 + N(0, sd)) at rounds R x U(0.8, 1.2) apart, one
figure a day 15% in the bad direction (+ latency, - bandwidth), 1% of the runs
disturbed (no figure). The baseline is the median of `baseline` figures. The
daemon publishes the median of the last `window` figures (the recent median);
the rule compares it with the baseline, asks it to hold `hold` (min/max over
time) when the host's exported refresh interval is <= 10 min, then `for: 5m`.
A rule sees a figure 0-2 min after it is published (scrape, recording rule).
Failed scrapes are not modelled here: every rule input is read through
last_over_time(...[15m]), so gaps shorter than that change nothing (the
promtool scenarios include them).

Three cadences: a 5-min host, a 30-min host, and a rotating 5-min host's
representative pair (figures every 5 min, but the host exports the cycle's
refresh interval, 30 min, so the rules treat it like a 30-min host).

Mechanisms (one per line of the table):
- current: median of 3, +5% / -12%, hold 20 min at <= 10-min intervals;
- fixed thresholds moved for the new noise;
- a longer recent median (5 figures) on every host;
- thresholds from each series' measured noise (k x the baseline's
  (max - min) / median, at least the fixed threshold);
- confirmation: a figure beyond a band around the baseline whose recent
  median was inside it makes the daemon measure the pair `confirm` more times
  next (each run a visit of its own, 0.5-2 min after the previous one: a latency run
  costs ~45 ms and a bandwidth visit ~260 ms of the 0.6 CPU-s a 5-min interval pays), so that the median of 3
  is over the suspicious figure and its confirmations.

For each it reports false drift alerts per 100 series-weeks (healthy series)
and, for a sustained step (+10% latency, -20% bandwidth) starting at a random
moment, the share that fires within the promise (45 min after the onset on
5-min hosts, 60 min on 30-min hosts and rotating hosts' representatives) and
the 99th percentile of the time to fire; for confirmation also the extra runs
per series and day on healthy series (their CPU cost).

  bench/detection_thresholds.py [--weeks 3000] [--steps 3000] [--only NAME]

Not a test: the promtool scenarios in tests/grafana/test_detection.py check
the rules themselves; this explains where the mechanism and its numbers come from.
"""
from __future__ import annotations

import argparse
import bisect
import random
import time
from dataclasses import dataclass

MIN, DAY, WEEK = 60, 86400, 7 * 86400
FOR_S = 300
LIMIT_S = {"5min": 45 * MIN, "30min": 60 * MIN, "rotation": 60 * MIN}
CADENCE = {"5min": (300, 300), "30min": (1800, 1800), "rotation": (300, 1800)}  # (figure every, exported)
SD = {"latency": 0.02, "bandwidth": 0.04}
STEP = {"latency": 1.10, "bandwidth": 0.80}
SIGN = {"latency": +1, "bandwidth": -1}


@dataclass(frozen=True)
class Mechanism:
    name: str
    thr: dict  # kind -> threshold (relative)
    window: int = 3
    hold_s: int = 1200  # at exported intervals <= 600 s
    baseline: int = 5
    noise_k: float = 0.0  # > 0: threshold = max(thr, k x baseline spread)
    confirm: int = 0  # extra runs after a suspicious figure
    band: dict | None = None  # kind -> relative deviation that makes a figure suspicious


MECHANISMS = [
    Mechanism("current", {"latency": 0.05, "bandwidth": 0.12}),
    Mechanism("fixed 6% / 14%", {"latency": 0.06, "bandwidth": 0.14}),
    Mechanism("median of 5, 6% / 13%", {"latency": 0.06, "bandwidth": 0.13}, window=5),
    Mechanism("noise bands 1.5x spread", {"latency": 0.05, "bandwidth": 0.12}, noise_k=1.5),
    Mechanism("confirm 2 (median of 3), band 4% / 8%", {"latency": 0.05, "bandwidth": 0.12}, confirm=2,
              band={"latency": 0.04, "bandwidth": 0.08}),
    Mechanism("confirm 4 (median of 5), band 5% / 10%, 6% / 13%, no hold", {"latency": 0.06, "bandwidth": 0.13},
              window=5, confirm=4, hold_s=0, band={"latency": 0.05, "bandwidth": 0.10}),
    Mechanism("confirm 4 (median of 5), band 5% / 10%, 6% / 13%, no hold, baseline 15",
              {"latency": 0.06, "bandwidth": 0.13}, window=5, confirm=4, hold_s=0, baseline=15,
              band={"latency": 0.05, "bandwidth": 0.10}),
    Mechanism("confirm 4 (median of 5), band 5% / 10%, 5% / 12%, no hold, baseline 15",
              {"latency": 0.05, "bandwidth": 0.12}, window=5, confirm=4, hold_s=0, baseline=15,
              band={"latency": 0.05, "bandwidth": 0.10}),
]


def dev(ratio: float, sign: int) -> float:
    """How far a ratio to the baseline is in the bad direction."""
    return (ratio - 1) * sign


class Series:
    """One series as the daemon publishes it: figures and recent medians with
    their times, the baseline and its spread."""

    def __init__(self, m: Mechanism, kind: str, cadence: str, rng: random.Random, step_at: float | None,
                 duration: float):
        self.m, self.kind, self.rng = m, kind, rng
        self.sd, self.sign = SD[kind], SIGN[kind]
        every, self.exported = CADENCE[cadence]
        base = sorted(self.figure(1.0) for _ in range(m.baseline))
        self.base = base[len(base) // 2]
        self.spread = (base[-1] - base[0]) / self.base
        self.thr = max(m.thr[kind], m.noise_k * self.spread)
        self.extra_runs = 0
        # (time, recent median) at every figure from the 'window'-th on.
        self.medians: list[tuple[float, float]] = []
        figs: list[float] = []
        t = -every * rng.uniform(0, 1.2) if step_at is not None else rng.uniform(0, every)
        outlier = rng.uniform(0, DAY)
        pending: list[float] = []  # confirmation run times
        while True:
            nxt = t + every * rng.uniform(0.8, 1.2)
            if pending and pending[0] < nxt:
                t = pending.pop(0)
                self.extra_runs += 1
                confirming = True
            else:
                t, confirming = nxt, False
            if t > duration:
                break
            if rng.random() < 0.01:  # disturbed: no figure
                continue
            level = STEP[kind] if step_at is not None and t >= step_at else 1.0
            v = self.figure(level)
            if t >= outlier:
                v *= 1 + self.sign * 0.15
                outlier += DAY * rng.uniform(0.75, 1.25)
            before = self.median(figs)
            figs.append(v)
            if len(figs) >= m.window:
                self.medians.append((t, self.median(figs)))
            if m.confirm and not confirming and not pending and dev(v / self.base, self.sign) > m.band[kind] \
                    and (before is None or dev(before / self.base, self.sign) <= m.band[kind]):
                c = t
                for _ in range(m.confirm):
                    c += rng.uniform(0.5, 2) * MIN
                    pending.append(c)

    def figure(self, level: float) -> float:
        return level * (1 + self.rng.gauss(0, self.sd))

    def median(self, figs: list[float]) -> float | None:
        if len(figs) < self.m.window:
            return None
        return sorted(figs[-self.m.window:])[self.m.window // 2]

    def over(self, median: float) -> bool:
        return dev(median / self.base, self.sign) > self.thr

    def firings(self) -> list[float]:
        """When the alert starts firing (each episode once)."""
        need = FOR_S + (self.m.hold_s if self.exported <= 600 else 0)
        out, start, fired = [], None, False
        for i, (t, med) in enumerate(self.medians):
            seen = t + self.rng.uniform(0, 2 * MIN)
            if self.over(med):
                if start is None:
                    start, fired = seen, False
                end = self.medians[i + 1][0] if i + 1 < len(self.medians) else float("inf")
                if not fired and end + 2 * MIN - start >= need:
                    out.append(start + need)
                    fired = True
            else:
                start = None
        return out


def false_alarms(m, kind, cadence, weeks, rng):
    n = extra = 0
    for _ in range(weeks):
        s = Series(m, kind, cadence, rng, None, WEEK)
        n += len(s.firings())
        extra += s.extra_runs
    return 100 * n / weeks, extra / (7 * weeks)


def time_to_fire(m, kind, cadence, steps, rng):
    ttf = []
    for _ in range(steps):
        # Onset 3 h into the series (enough figures before it).
        onset = 3 * 3600 + rng.uniform(0, 1800)
        s = Series(m, kind, cadence, rng, onset, onset + 4 * 3600)
        after = [f for f in s.firings() if f >= onset]
        ttf.append(after[0] - onset if after else float("inf"))
    ttf.sort()
    ok = bisect.bisect_right(ttf, LIMIT_S[cadence]) / steps
    return ok, ttf[int(0.99 * (steps - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weeks", type=int, default=3000, help="healthy series-weeks per line")
    ap.add_argument("--steps", type=int, default=3000, help="steps per line")
    ap.add_argument("--only", help="mechanism names containing this")
    args = ap.parse_args()
    print(f"figure sd: latency {SD['latency']:.0%}, bandwidth {SD['bandwidth']:.0%}; "
          f"{args.weeks} series-weeks and {args.steps} steps per line")
    print("| mechanism | series | cadence | false alarms / 100 series-weeks | fires in time | p99 time to fire "
          "| extra runs / series-day |")
    print("|---|---|---|---|---|---|---|")
    rng = random.Random(21)
    for m in MECHANISMS:
        if args.only and args.only not in m.name:
            continue
        for kind in ("latency", "bandwidth"):
            for cadence in ("5min", "30min", "rotation"):
                t0 = time.monotonic()
                fa, extra = false_alarms(m, kind, cadence, args.weeks, rng)
                ok, p99 = time_to_fire(m, kind, cadence, args.steps, rng)
                p99s = "never" if p99 == float("inf") else f"{p99 / MIN:.0f} min"
                print(f"| {m.name} | {kind} {'+10%' if kind == 'latency' else '-20%'} | {cadence} | {fa:.2f} "
                      f"| {ok:.2%} | {p99s} | {extra:.2f} |", flush=True)


if __name__ == "__main__":
    main()
