#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which confirmation band the peak_bandwidth kind should use
(its KindTraits::confirmation_band, 8% below today; docs/detection.md, "The peak
bandwidth alert"): a Monte Carlo of one peak series as the daemon measures and
publishes it and of NumaProbePeakBandwidthDrop on it, for each band asked.

A series: figures level x (1 + N(0, sd)) (sd 2.5%, the generated scenarios'
tests/grafana/series_gen.py NOISE_SD["peak"], and 3%), one figure a day 15% low
(the drift alerts' daily outlier, 24 h x U(0.75, 1.25) apart: a quarter of the
peak's figures), on the peak's own schedule (daemon/serve/own_schedule.h): a
cycle every 6 h (probes.peak_bandwidth.interval) at the first round's end
after it is due (rounds 5 min x U(0.8, 1.2) apart), one peak run per round's
end (the peak's budget, 1% of one CPU, pauses ~100 s after a ~1 CPU-s run).
A run the idle gate skips (10% of the runs, series_gen's peak_busy) is made at
the next round's end; 1% of the runs are disturbed (no figure) and retried
once at the next round's end.

Baseline: the median of 15 Gaussian figures (baseline.rounds; recorded at once
in cycles paced by the budget, so without outliers); they stay in the series'
recent figures (SeriesHistory::Add). The daemon publishes the median of the
last 5 figures. Confirmation, exactly SeriesHistory::NeedsConfirmation: a
figure of a run that is not itself a confirmation, more than `band` under the
baseline (1 - figure / baseline > band) while the median of the last 5 before
it is not (1 - median / baseline <= band), queues 4 confirmation runs right
after it (round_tasks.cc QueueConfirmations): one per round's end, ~5, 10, 15
and 20 min later (--confirm-gap to change that: a node whose run costs c CPU-s
pauses c / 0.01 s). The rule: 1 - median / baseline > 8%
(peakBandwidthDropThreshold) for 5 min, seen 0-2 min after the daemon
publishes (scrape, rule evaluation); the daemon exports the median between
runs, so it holds between figures.

Reports, per band:
- healthy series (the daily outlier included): alarmed series-weeks per 100
  (series-weeks with at least one firing, counted after 2 days of warm-up
  that bring the recent figures and the outliers to their steady state), with
  a 95% interval, firing episodes per 100 series-weeks, and the confirmation
  runs made per series-week (each costs a peak run's CPU);
- a lost memory channel of 8 (level x 0.875) and of 12 (x 0.917), from a
  reboot 2-3 days into the series (firmware maps the channel out; the daemon
  restarts with its baseline and recent figures from the state file, drops
  the confirmations it had queued and runs a cycle at the first round's end):
  the share whose first figure after the loss is confirmed (leaves the band
  while the median is inside it; in brackets among first figures that were
  not the day's outlier, docs/detection.md's Gaussian reading), time to fire
  from that figure (within 1 h, within 1 day, not within 7 days, the median,
  the 90th percentile), and, over the week after the first firing, the share
  that resolve, the share that resolve and fire again (flapping), the firing
  episodes in that week and its share spent firing.

  bench/peak_band.py [--band 0.10 --band 0.08 ...] [--noise 0.025 --noise 0.03]
                     [--weeks 300000] [--steps 20000] [--loss-noise 0.025]
                     [--only healthy|loss] [--confirm-gap MIN MAX] [--seed 7]
                     [--hold RESOLVE HOURS]

--hold adds the rule's hysteresis (once over the threshold it holds while the
drop is over RESOLVE, for at most HOURS after the last median over the
threshold); the mixin's is --hold 0.04 48:
  bench/peak_band.py --only loss --band 0.08 --steps 20000 --hold 0.04 48
  bench/peak_band.py --only healthy --band 0.08 --hold 0.04 48 --noise 0.025 --weeks 2000000
  (and --noise 0.03 --weeks 500000)

The band comparison ran one band at a time at 2.5% (~5 CPU-min a line), the
rest together (~4 and ~1 CPU-min):
  bench/peak_band.py --only healthy --band 0.10 --noise 0.025 --weeks 2000000
  (and --band 0.08, --band 0.06)
  bench/peak_band.py --only healthy --noise 0.03 --weeks 500000
  bench/peak_band.py --only loss --steps 50000
  bench/peak_band.py --noise 0.03 --weeks 200000 --steps 20000 --confirm-gap 0.5 2
  (and --confirm-gap 15 25)

Not a test: this explains where the peak's band and its numbers come from
(bench/detection_thresholds.py does the same for the latency and bandwidth
alerts, whose helpers this reuses).
"""
from __future__ import annotations

import argparse
import bisect
import math
import random
import time

from detection_thresholds import DAY, FOR_S, MIN, WEEK, dev

HOUR = 3600
INTERVAL_S = 6 * HOUR  # probes.peak_bandwidth.interval
ROUND_S = (240, 360)  # schedule.interval 5 min, jitter 0.2
BUSY = 0.10  # runs the idle gate skips (series_gen.py Host.peak_busy)
DISTURBED = 0.01  # runs with no figure (series_gen.py MISSED_RUN_SHARE)
OUTLIER = 0.85  # series_gen.py OUTLIER_FACTOR["peak"]
BASELINE = 15  # baseline.rounds
WINDOW = 5  # SeriesHistory::kWindow
CONFIRM_RUNS = WINDOW - 1  # SeriesHistory::kConfirmationRuns
THRESHOLD = 0.08  # peakBandwidthDropThreshold
LAG_S = 2 * MIN  # a rule sees a median 0-2 min after it is published
SIGN = -1  # a lower peak is worse
BANDS = (0.10, 0.08, 0.06)
LOSSES = {"channel of 8": 0.875, "channel of 12": 0.917}
WARMUP_S = 2 * DAY


class PeakSeries:
    """One peak series: its baseline, recent figures, the medians the daemon
    published (time, median) and its runs."""

    def __init__(self, band: float, sd: float, rng: random.Random, confirm_gap: tuple[float, float]):
        self.band, self.sd, self.rng, self.gap = band, sd, rng, confirm_gap
        recorded = [1 + rng.gauss(0, sd) for _ in range(BASELINE)]
        self.base = sorted(recorded)[BASELINE // 2]
        self.recent = recorded[-WINDOW:]  # the recorded figures are recent figures too
        self.outlier = rng.uniform(0, DAY)  # when the next outlier comes
        self.medians: list[tuple[float, float]] = [(0.0, self.median())]
        # (time, confirmed: it queued confirmations, an outlier)
        self.figures: list[tuple[float, bool, bool]] = []
        self.confirmation_runs: list[float] = []  # times of the confirmation runs made (not skipped)

    def median(self) -> float:
        return sorted(self.recent)[WINDOW // 2]

    def needs_confirmation(self, figure: float) -> bool:
        """SeriesHistory::NeedsConfirmation with band -self.band (armed
        baseline; the recent median always exists: the recorded figures)."""
        if dev(figure / self.base, SIGN) <= self.band:
            return False
        return dev(self.median() / self.base, SIGN) <= self.band

    def run(self, first_cycle: float, end: float, level: float) -> None:
        """The daemon from a start (nothing queued) until `end`: a cycle at
        `first_cycle`, then one every INTERVAL_S after the last began."""
        rng = self.rng
        queue: list[list] = []  # [confirmation, attempt] in order
        t, next_cycle = 0.0, first_cycle
        while True:
            if queue:
                t += rng.uniform(*self.gap)  # the next round's end: one peak run per round's end
            else:
                t = max(t, next_cycle)
            if t >= next_cycle:  # a cycle is due: its run joins the queue
                queue.append([False, 0])
                next_cycle = t + INTERVAL_S + rng.uniform(0, ROUND_S[1])
            if t >= end:
                break
            if rng.random() < BUSY:  # skipped: tried again at the next round's end
                continue
            confirming, attempt = queue.pop(0)
            if confirming:
                self.confirmation_runs.append(t)
            if rng.random() < DISTURBED:
                if attempt == 0:  # retried once, at the end of the queue
                    queue.append([confirming, 1])
                continue
            v = level * (1 + rng.gauss(0, self.sd))
            outlier = t >= self.outlier
            if outlier:
                v *= OUTLIER
                self.outlier += DAY * rng.uniform(0.75, 1.25)
            confirm = not confirming and self.needs_confirmation(v)
            self.recent.pop(0)
            self.recent.append(v)
            self.medians.append((t, self.median()))
            self.figures.append((t, confirm, outlier))
            if confirm:
                queue[0:0] = [[True, 0] for _ in range(CONFIRM_RUNS)]

    def episodes(self, hold: tuple[float, float] | None = None) -> list[tuple[float, float]]:
        """The alert's firing episodes: (fires, resolves), inf if it does not
        resolve in the series. `hold` (resolve, window): the rule's
        hysteresis (NumaProbePeakBandwidthDrop's second clause): over the
        threshold, it also holds while the drop is over `resolve`, until the
        drop falls to `resolve` or `window` seconds after the last median over
        the threshold."""
        seen = [(t + self.rng.uniform(0, LAG_S), dev(med / self.base, SIGN)) for t, med in self.medians]
        # The rule's condition changes where a median is seen, and where a
        # median over the threshold leaves the hold window.
        events = [(t, i) for i, (t, _) in enumerate(seen)]
        if hold:
            events += [(seen[i + 1][0] + hold[1], -1) for i in range(len(seen) - 1) if seen[i][1] > THRESHOLD]
            events.sort()
        out, start, fired = [], None, False
        current, crossed_until = 0.0, -float("inf")  # the drop seen now; when the last crossing leaves the window
        for t, i in events:
            if i >= 0:
                current = seen[i][1]
                if hold and current > THRESHOLD:
                    crossed_until = float("inf")
                elif crossed_until == float("inf"):
                    crossed_until = t + hold[1]
                if hold and current <= hold[0]:
                    crossed_until = -float("inf")  # recovered: the hold ends until the next crossing
            over = current > THRESHOLD or bool(hold and current > hold[0] and t < crossed_until)
            if start is not None and not fired and t - start >= FOR_S:
                out.append([start + FOR_S, float("inf")])
                fired = True
            if over and start is None:
                start, fired = t, False
            elif not over and start is not None:
                if fired:
                    out[-1][1] = t
                start = None
        if start is not None and not fired:
            out.append([start + FOR_S, float("inf")])
        return [tuple(e) for e in out]


def healthy(band, sd, weeks, rng, gap, hold=None):
    """Alarmed series-weeks, firing episodes and confirmation runs made, over
    `weeks` healthy series-weeks."""
    alarmed = episodes = runs = 0
    for _ in range(weeks):
        s = PeakSeries(band, sd, rng, gap)
        end = WARMUP_S + WEEK
        s.run(rng.uniform(0, INTERVAL_S), end, 1.0)
        fires = [f for f, _ in s.episodes(hold) if WARMUP_S <= f < end]
        alarmed += bool(fires)
        episodes += len(fires)
        runs += sum(WARMUP_S <= c < end for c in s.confirmation_runs)
    return alarmed, episodes, runs


def loss(band, sd, level, steps, rng, gap, hold=None):
    """Per case: first figure after the loss confirmed, time to fire from it,
    and the week after the first firing: resolved, fired again, episodes,
    share of the week firing; and whether that first figure was an outlier."""
    out = []
    for _ in range(steps):
        s = PeakSeries(band, sd, rng, gap)
        boot = rng.uniform(2, 3) * DAY
        s.run(rng.uniform(0, INTERVAL_S), boot, 1.0)
        n = len(s.figures)
        s.run(boot + rng.uniform(1, 5) * MIN, boot + 15 * DAY, level)
        first, confirmed, outlier = s.figures[n]
        eps = [e for e in s.episodes(hold) if e[1] > first]
        fire = next((max(f, first) for f, _ in eps), float("inf"))
        ttf = fire - first
        resolved = again = 0
        n_eps = firing = 0.0
        if ttf <= 7 * DAY:
            week_end = fire + WEEK
            in_week = [(max(f, fire), min(r, week_end)) for f, r in eps if f < week_end and r > fire]
            n_eps = len(in_week)
            firing = sum(r - f for f, r in in_week) / WEEK
            resolved = in_week[0][1] < week_end
            again = n_eps > 1
        out.append((confirmed, ttf, resolved, again, n_eps, firing, outlier))
    return out


def interval95(k: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a proportion k / n."""
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def minutes(s: float) -> str:
    if s == float("inf"):
        return "never"
    return f"{s / MIN:.0f} min" if s < 2 * HOUR else f"{s / HOUR:.1f} h"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--band", type=float, action="append", choices=BANDS,
                    help="confirmation band(s), a fraction under the baseline (default: all)")
    ap.add_argument("--noise", type=float, action="append", help="figure sd(s) (default 0.025 and 0.03)")
    ap.add_argument("--weeks", type=int, default=300000, help="healthy series-weeks per line")
    ap.add_argument("--steps", type=int, default=20000, help="losses per line (2.5%% noise, or --loss-noise)")
    ap.add_argument("--loss-noise", type=float, default=0.025, help="figure sd of the losses")
    ap.add_argument("--only", choices=("healthy", "loss"))
    ap.add_argument("--confirm-gap", type=float, nargs=2, default=[ROUND_S[0] / MIN, ROUND_S[1] / MIN],
                    metavar=("MIN", "MAX"),
                    help="minutes between queued runs (confirmations, retries); default: a round")
    ap.add_argument("--hold", type=float, nargs=2, metavar=("RESOLVE", "HOURS"),
                    help="the rule's hysteresis: once over the threshold it holds while the drop is over RESOLVE, "
                         "for at most HOURS after the last median over the threshold (the mixin: 0.04 48; "
                         "default: none, the rule before)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    bands = args.band or list(BANDS)
    noises = args.noise or [0.025, 0.03]
    gap = (args.confirm_gap[0] * MIN, args.confirm_gap[1] * MIN)
    hold = (args.hold[0], args.hold[1] * HOUR) if args.hold else None
    if args.only != "loss":
        print(f"healthy: {args.weeks} series-weeks per line (after {WARMUP_S // DAY} days of warm-up)")
        print("| band | noise | alarmed series-weeks / 100 (95%) | episodes / 100 | confirmation runs / "
              "series-week | s |")
        print("|---|---|---|---|---|---|")
        for band in bands:
            for sd in noises:
                t0 = time.process_time()
                a, e, r = healthy(band, sd, args.weeks, random.Random(args.seed), gap, hold)
                lo, hi = interval95(a, args.weeks)
                print(f"| -{band:.0%} | {sd:.1%} | {100 * a / args.weeks:.3f} ({100 * lo:.3f}-{100 * hi:.3f}; {a}) "
                      f"| {100 * e / args.weeks:.3f} | {r / args.weeks:.2f} | {time.process_time() - t0:.0f} |",
                      flush=True)
    if args.only != "healthy":
        print(f"\nlosses: {args.steps} per line, noise {args.loss_noise:.1%}; time to fire from the first figure "
              "after the loss; flapping over the week after the first firing")
        print("| band | loss | first figure confirmed (not an outlier) | fires within 1 h | within 1 day "
              "| not within 7 days | median | p90 | resolves | resolves and fires again | episodes | week firing | s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for band in bands:
            for name, level in LOSSES.items():
                t0 = time.process_time()
                cases = loss(band, args.loss_noise, level, args.steps, random.Random(args.seed + 1), gap, hold)
                n = len(cases)
                ttf = sorted(c[1] for c in cases)
                fired = [c for c in cases if c[1] <= 7 * DAY]
                nf = max(len(fired), 1)
                plain = [c for c in cases if not c[6]]
                print(f"| -{band:.0%} | {name} (x{level}) | {sum(c[0] for c in cases) / n:.1%} "
                      f"({sum(c[0] for c in plain) / max(len(plain), 1):.1%}) "
                      f"| {bisect.bisect_right(ttf, HOUR) / n:.1%} | {bisect.bisect_right(ttf, DAY) / n:.1%} "
                      f"| {1 - bisect.bisect_right(ttf, 7 * DAY) / n:.2%} | {minutes(ttf[n // 2])} "
                      f"| {minutes(ttf[int(0.9 * (n - 1))])} | {sum(c[2] for c in fired) / nf:.1%} "
                      f"| {sum(c[3] for c in fired) / nf:.1%} | {sum(c[4] for c in fired) / nf:.2f} "
                      f"| {sum(c[5] for c in fired) / nf:.1%} | {time.process_time() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    main()
