#!/usr/bin/env python3
"""Design calculation behind the drift thresholds (docs/detection.md,
"Thresholds"): a Monte Carlo of the drift alerts' logic on the noise model of
tests/grafana/series_gen.py, for a range of figure noise and thresholds.

For each refresh interval R (5 and 30 min, jittered +-20%) it simulates
healthy series for many weeks and reports false alarms per series and week,
and simulates a sustained step (+10% latency, -20% bandwidth) and reports the
share that fires in time (5-min rounds: within 60 min of the onset; 30-min
rounds: within 10 min of the second figure after the onset, i.e. the median
of the last 3 figures is over the threshold at that figure).

The model: baseline = median of 5 figures, figure = level x (1 + N(0, sd)),
one outlier figure a day (+15% latency, -15% bandwidth); the alert compares the
median of the last 3 figures with the baseline; at R <= 10 min the condition
must hold 20 min, then 5 min (for:); at longer R 5 min.

  bench/detection_thresholds.py [--weeks 400] [--steps 20000]

Not a test: the promtool scenarios in tests/grafana/test_detection.py check
the rules themselves; this explains where the numbers in the rules come from.
"""
from __future__ import annotations

import argparse
import random

HOLD_S, FOR_S = 1200, 300


def figure(rng, sd, level=1.0):
    return level * (1 + rng.gauss(0, sd))


def baseline(rng, sd):
    return sorted(figure(rng, sd) for _ in range(5))[2]


def over(ratio, thr, sign):
    return ratio - 1 > thr if sign > 0 else 1 - ratio > thr


def false_alarms(sd, thr, refresh, sign, weeks, rng):
    """Alert episodes per series-week on healthy figures."""
    episodes = 0
    for _ in range(weeks):
        b = baseline(rng, sd)
        figs, t, since, firing = [], 0.0, None, False
        outlier = rng.uniform(0, 86400)
        while t < 7 * 86400:
            t += refresh * rng.uniform(0.8, 1.2)
            v = figure(rng, sd)
            if t >= outlier:
                v *= 1 + sign * 0.15
                outlier += 86400 * rng.uniform(0.75, 1.25)
            figs.append(v)
            if len(figs) < 3:
                continue
            cond = over(sorted(figs[-3:])[1] / b, thr, sign)
            if not cond:
                since, firing = None, False
                continue
            since = t if since is None else since
            need = HOLD_S + FOR_S if refresh <= 600 else FOR_S
            # The condition lasts at least until the next figure.
            if not firing and t + refresh * 0.8 - since >= need:
                episodes += 1
                firing = True
    return episodes / weeks


def in_time(sd, thr, refresh, sign, steps, rng):
    """Share of sustained steps that fire in time."""
    step = 1.10 if sign > 0 else 0.80
    ok = 0
    for _ in range(steps):
        b = baseline(rng, sd)
        pre = [figure(rng, sd) for _ in range(2)]
        if refresh > 600:
            post = [figure(rng, sd, step) for _ in range(2)]
            # The median at the 2nd figure after the onset (or the 1st).
            ok += over(sorted(pre[1:] + post[:1] + post[1:])[1] / b, thr, sign) or \
                over(sorted(pre + post[:1])[1] / b, thr, sign)
            continue
        # 5-min rounds: the median must stay over for HOLD + FOR within 60 min.
        figs, t, since, fired = list(pre), 0.0, None, False
        t_next = refresh * rng.uniform(0, 1.2)
        while t_next < 3600 and not fired:
            figs.append(figure(rng, sd, step))
            cond = over(sorted(figs[-3:])[1] / b, thr, sign)
            since = (t_next if since is None else since) if cond else None
            t_next += refresh * rng.uniform(0.8, 1.2)
            if since is not None and min(t_next, 3600) - since >= HOLD_S + FOR_S + 120:
                fired = True
        ok += fired
    return ok / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weeks", type=int, default=400)
    ap.add_argument("--steps", type=int, default=20000)
    args = ap.parse_args()
    rng = random.Random(9)
    cases = [("latency +10%", +1, sd, thr) for sd in (0.010, 0.018, 0.022) for thr in (0.04, 0.05, 0.06, 0.07)]
    cases += [("bandwidth -20%", -1, sd, thr) for sd in (0.031,) for thr in (0.10, 0.11, 0.12, 0.13)]
    print("| step | figure sd | threshold | R | false alarms / series-week | fires in time |")
    print("|---|---|---|---|---|---|")
    for name, sign, sd, thr in cases:
        for refresh in (300, 1800):
            fa = false_alarms(sd, thr, refresh, sign, args.weeks, rng)
            ok = in_time(sd, thr, refresh, sign, args.steps, rng)
            print(f"| {name} | {sd:.1%} | {thr:.0%} | {refresh // 60} min | {fa:.3f} | {ok:.2%} |")


if __name__ == "__main__":
    main()
