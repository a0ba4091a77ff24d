#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Design calculation for the peer alert NumaProbeRemoteLocalRatioOutlier
(docs/detection.md, "Thresholds"): how often does it fire on healthy cohorts,
and how soon on a host out of line, as it was and as it is now? A Monte Carlo
of what a cohort of daemons publishes and what either form of the rule decides
from it, on the noise model of tests/grafana/series_gen.py and
bench/detection_thresholds.py. Both forms read the same simulated figures.

For a host h and a remote pair p = (cpu_node, mem_node), the deviation
d = ratio(h, p) / median over the cohort's hosts (h included) of ratio(., p)
- 1, where ratio is the remote/local ratio of two medians of the pair's last
figures (the daemon's numaprobe_memory_latency_recent_remote_local_ratio over
the recorded ...:peer_median, minus 1; the cohort median is PromQL's
quantile(0.5), the mean of the middle two for an even count). The alert is
per host: the max over the host's remote pairs of |d| > 8% at every
evaluation for `for:` (instance:...:peer_deviation_max).
- before: the ratio of the recent medians (of 5 figures), `for: 1h` on every
  host;
- now: the ratio of the peer medians (of 9 figures, SeriesHistory::
  kPeerWindow), `for: 1h` on hosts refreshing at least every 10 min and
  `for: 2h` on the others (peerLongFor).
The rule is evaluated every 60 s; an alert fires at the first evaluation at
which its condition has held at every evaluation of `for:` (61 evaluations
for 1h), and an episode is counted once, however long it fires.

What the daemon publishes (as series_gen.py, every assumption here):
- A host runs rounds R x U(0.8, 1.2) apart (R = 5 or 30 min), one round
  timeline per host; each latency pair is measured once a round, at its own
  offset in the round (pairs spread over 10% of a 5-min round, 90% of a 30-min
  round, in pair order, as series_gen.py spreads a host's probes).
- A figure = true level x (1 + N(0, sd)), sd 2% (the promised latency noise) or
  1.5% (idle machines); one figure per series about once a day is 15% high
  (24 h x U(0.75, 1.25) apart); 1% of the runs are disturbed (no figure).
- The medians: of the series' last 5 figures (before) or 9 (now), published
  at each figure from the 5th (9th) on.
- Confirmation runs, as the daemon does them (docs/detection.md, "What is
  compared with what"; not in the brief's model, see --no-confirm): a figure
  more than 5% above the series' baseline (the median of 15 figures recorded
  at the healthy level) while its recent median is inside that band makes the
  daemon measure the pair 4 more times next, each 30-120 s after the previous
  one; round runs go on meanwhile, and no new confirmation starts while some
  are pending (detection_thresholds.py). The step below is confirmed too: the
  baseline predates it.
- The ratio a host publishes for a remote pair = median(remote pair) /
  median(local pair of its cpu_node), the local pair a series of the
  same model. The true remote level is the cohort's x (1 + o), o ~ N(0, 1.5%)
  clipped to +-3% (the docs' "assumed 1.5% sd, clipped at 3%"; series_gen.py
  clips at 2 sd, the same). Two readings of o, both run:
  `host` (series_gen.py's): one o per host, shared by all its remote pairs;
  `pair`: one o per host and remote pair, independent.
  The true local level is the same on every host (a common factor would
  cancel in the ratio).
- What the rule sees: each host is scraped every 60 s at its own phase
  U(0, 60 s); the alert sees a scrape at the next evaluation on the minute
  grid (0-2 min after the figure in all). Failed scrapes, restarts and
  rotation are not modelled (every rule input is read through
  last_over_time(...[15m]); detection_thresholds.py says the same).

Topologies: 2-node hosts (2 remote pairs, 2 local) and 8-node hosts (56
remote, 8 local); cohorts of 5 hosts (the rules' minimum, peerCohortMin) and
20, all of the same topology and model.

Per line of the table, for each form:
- false alarms on healthy cohorts: host-weeks with at least one alert episode
  per 100, and alert episodes per 100 host-weeks. Each cohort-week is
  simulated from 4 h before the week (plus the rounds the first medians
  need); episodes count when they start firing within the week.
- a host out of line: from an onset on, one remote pair of one host (host,
  pair and onset drawn at random, onset uniform over the week) measures 12%
  above the cohort's true level, whatever the host's own offset (what the
  alert is for: a host out of line with its peers; a host's rise over its own
  baseline is the drift alert's, which fires at +6%). --step-own: 12% above
  the host's own level instead, so a host 3% below its cohort ends up 8.6%
  above it. On the background of a simulated healthy cohort-week (several
  onsets share one cohort-week, each on its own): the share whose alert
  starts firing within 4 h and within 6 h of the onset, and the p50 / p99
  time to fire ("never" = not within 6 h). An alert already firing at the
  onset (a false alarm in progress) has to end and start again to count: the
  share of such onsets is shown ("busy").

  bench/peer_thresholds.py [--weeks 100] [--steps 200] [--only NAME] [--seed 1]
                           [--no-confirm] [--step-own]

Not a test. Runtime grows with hosts x pairs x figures: an 8-node line (100
host-weeks, 200 onsets) takes about a minute, a 2-node line a few seconds;
the defaults' 20 lines about 15 min on one core. At 100 host-weeks a line resolves rates of a few
per 100 host-weeks at best: raise --weeks (with --only) to compare small ones.
"""
from __future__ import annotations

import argparse
import bisect
import math
import random
import time
from dataclasses import dataclass
from operator import mul, truediv

MIN, DAY, WEEK = 60, 86400, 7 * 86400
THRESHOLD = 0.08
PROMISE_MIN, LIMIT_MIN = 240, 360  # fire within 4 h; followed up to 6 h
WINDOW, BASELINE, CONFIRM, BAND = 5, 15, 4, 0.05  # WINDOW: the recent median's
CONFIRM_GAP_S = (30, 120)
OUTLIER, MISSED = 1.15, 0.01
COHORT_SD, COHORT_CLIP = 0.015, 0.03
STEP = 1.12
LEAD_MIN = 240  # evaluated minutes before the week (and before an onset): 2 holds


@dataclass(frozen=True)
class Form:
    name: str
    window: int  # figures behind each median of the ratio
    hold_min: int  # `for:` on hosts with 5-min rounds
    long_hold_min: int  # `for:` on hosts with 30-min rounds

    def hold(self, round_s: int) -> int:
        return self.hold_min if round_s <= 600 else self.long_hold_min


FORMS = [Form("before", 5, 60, 60), Form("now", 9, 60, 120)]


@dataclass(frozen=True)
class Line:
    nodes: int
    cohort: int
    round_s: int
    sd: float
    offsets: str  # "host": one ratio offset per host; "pair": per host and pair

    @property
    def name(self) -> str:
        return (f"{self.nodes}-node, {self.cohort} hosts, {self.round_s // 60}-min rounds, "
                f"sd {self.sd:.1%}, offset per {self.offsets}")


LINES = [Line(nodes, cohort, r, sd, off)
         for sd, off in ((0.02, "host"), (0.02, "pair"), (0.015, "host"))
         for nodes in (2, 8) for cohort in (5, 20) for r in (300, 1800)
         if not (off == "pair" and nodes == 2)]  # 2 pairs: the max hardly differs


def normals(rng: random.Random, n: int) -> list[float]:
    """n standard normal deviates (Box-Muller, in bulk: gauss() one at a
    time was most of the runtime)."""
    m = (n + 1) // 2
    rnd, log, sqrt, tau = rng.random, math.log, math.sqrt, math.tau
    r = [sqrt(-2.0 * log(1.0 - rnd())) for _ in range(m)]
    a = [tau * rnd() for _ in range(m)]
    return (list(map(mul, r, map(math.cos, a))) + list(map(mul, r, map(math.sin, a))))[:n]


def figures(runs: list[float], level: float, sd: float, rng: random.Random, confirm: bool,
            step_at: float = math.inf, stepped: float = 1.0) -> tuple[list[float], list[float]]:
    """One latency series: the times and values of its figures, from the
    daemon's runs at `runs` (plus confirmation runs), at `stepped` instead of
    `level` from step_at on. Vectorised: the round figures first, then the rare
    figures beyond the confirmation band in order (the outlier goes to the
    first round figure at or after its time, never to a confirmation run)."""
    gauss, rnd, unif = rng.gauss, rng.random, rng.uniform
    base = sorted(level * (1 + gauss(0, sd)) for _ in range(BASELINE))[BASELINE // 2]
    band = base * (1 + BAND)
    rt = [t for t in runs if rnd() >= MISSED]
    rv = [level * (1 + sd * z) for z in normals(rng, len(rt))]
    if step_at < math.inf:
        for j in range(bisect.bisect_left(rt, step_at), len(rt)):
            rv[j] *= stepped / level
    if rt:
        out, end = runs[0] + unif(0, DAY), rt[-1]
        while out <= end:
            j = bisect.bisect_left(rt, out)
            rv[j] *= OUTLIER
            out += DAY * unif(0.75, 1.25)
    if confirm:
        ts: list[float] = []
        vs: list[float] = []
        pos, busy_until = 0, -math.inf
        for i in [i for i, v in enumerate(rv) if v > band]:
            if rt[i] <= busy_until or i < pos:
                continue
            ts += rt[pos:i]
            vs += rv[pos:i]
            pos = i + 1
            ts.append(rt[i])
            vs.append(rv[i])
            if len(vs) > WINDOW and sorted(vs[-WINDOW - 1:-1])[WINDOW // 2] > band:
                continue  # the median is already beyond the band
            c, conf = rt[i], []
            for _ in range(CONFIRM):
                c += unif(*CONFIRM_GAP_S)
                if rnd() >= MISSED:
                    f = level * (1 + gauss(0, sd))
                    conf.append((c, f * stepped / level if c >= step_at else f))
            busy_until = c
            # Merge with the round figures before the last confirmation.
            while pos < len(rt) and rt[pos] < c:
                conf.append((rt[pos], rv[pos]))
                pos += 1
            conf.sort()
            ts += [x[0] for x in conf]
            vs += [x[1] for x in conf]
        ts += rt[pos:]
        vs += rv[pos:]
    else:
        ts, vs = rt, rv
    return ts, vs


def medians(fig: tuple[list[float], list[float]], window: int) -> tuple[list[float], list[float]]:
    """The times and values of the medians of the last `window` figures."""
    ts, vs = fig
    k = window // 2
    return ts[window - 1:], [sorted(w)[k] for w in zip(*(vs[j:len(vs) - window + 1 + j] for j in range(window)))]


def to_grid(ts: list[float], meds: list[float], phase: float, m0: int, n: int) -> list[float]:
    """The value the rule sees at the evaluations of minutes m0 .. m0+n-1: a
    figure at t is scraped at the host's next scrape (phase + k x 60 s) and
    seen by the evaluation at the next whole minute after it. Before the
    first median: the first median (the grids start after the warm-up)."""
    out: list[float] = []
    cur, filled = meds[0], 0
    ceil = math.ceil
    for t, v in zip(ts, meds):
        k = ceil((t - phase) / MIN) + 1 - m0
        if k > filled:
            if k >= n:
                break
            out += [cur] * (k - filled)
            filled = k
        cur = v
    out += [cur] * (n - filled)
    return out


def cohort_median(cols: list[list[float]]) -> list[float]:
    n = len(cols)
    if n % 2:
        k = n // 2
        return [s[k] for s in map(sorted, zip(*cols))]
    k = n // 2
    return [(s[k - 1] + s[k]) * 0.5 for s in map(sorted, zip(*cols))]


def runs_of(idx: list[int]):
    """Maximal runs [a, b] of consecutive minutes in a sorted index list."""
    if not idx:
        return
    a = prev = idx[0]
    for i in idx[1:]:
        if i != prev + 1:
            yield a, prev
            a = i
        prev = i
    yield a, prev


def episodes(idx: list[int], first: int, hold: int) -> int:
    """Alert episodes starting to fire at index >= first."""
    return sum(1 for a, b in runs_of(idx) if b - a >= hold and a + hold >= first)


def time_to_fire(idx: list[int], onset_i: int, hold: int) -> tuple[float, bool]:
    """(minutes from the onset's evaluation to the first fresh firing or inf,
    whether the alert was firing at the evaluation before the onset and still
    at the onset)."""
    busy = False
    for a, b in runs_of(idx):
        if b - a < hold:
            continue
        f = a + hold
        if f < onset_i <= b:
            busy = True
        if f >= onset_i:
            return f - onset_i, busy
    return math.inf, busy


class Host:
    def __init__(self, line: Line, rng: random.Random, start: float, end: float, pairs):
        self.phase = rng.uniform(0, MIN)
        r = line.round_s
        t, self.rounds = start + r * rng.uniform(0, 1), []
        while t < end:
            self.rounds.append(t)
            t += r * rng.uniform(0.8, 1.2)
        spread = 0.1 if r <= 600 else 0.9
        self.offset_s = {p: spread * r * (k + 1) / len(pairs) for k, p in enumerate(pairs)}

        def draw():
            return max(-COHORT_CLIP, min(COHORT_CLIP, rng.gauss(0, COHORT_SD)))
        o = draw()
        self.level = {p: 1.0 if p[0] == p[1] else 1 + (o if line.offsets == "host" else draw()) for p in pairs}

    def runs(self, pair, since: float = -math.inf, until: float = math.inf) -> list[float]:
        off = self.offset_s[pair]
        return [t + off for t in self.rounds if since <= t + off <= until]


def cohort_week(line: Line, rng: random.Random, n_steps: int, confirm: bool, step_own: bool, res: dict):
    nodes = range(line.nodes)
    pairs = [(c, m) for c in nodes for m in nodes]
    remote = [p for p in pairs if p[0] != p[1]]
    m0 = -LEAD_MIN  # grid index 0 = minute m0 (the week starts at minute 0)
    n = WEEK // MIN - m0
    longest = max(f.window for f in FORMS)
    start = m0 * MIN - (longest + 3) * line.round_s - 600  # the first medians before the grid starts
    hosts = [Host(line, rng, start, WEEK + 600, pairs) for _ in range(line.cohort)]
    hi, lo = 1 + THRESHOLD, 1 - THRESHOLD
    onsets = []  # host, pair, onset (s), window [ws, we) of grid indices
    for _ in range(n_steps):
        onset = rng.uniform(0, WEEK - LIMIT_MIN * MIN - 600)
        oi = math.ceil(onset / MIN) - m0
        onsets.append({"h": rng.randrange(len(hosts)), "p": rng.choice(remote), "onset": onset, "oi": oi,
                       "ws": oi - LEAD_MIN, "we": oi + LIMIT_MIN + 1})
    # The figures, once: both forms read the same.
    loc_fig = [{c: figures(h.runs((c, c)), 1.0, line.sd, rng, confirm) for c in nodes} for h in hosts]
    rem_fig = {p: [figures(h.runs(p), h.level[p], line.sd, rng, confirm) for h in hosts] for p in remote}
    # The onset pair's figures around its onset, on the same background.
    for s in onsets:
        k, p, h = s["h"], s["p"], hosts[s["h"]]
        t_ws = (s["ws"] + m0) * MIN
        runs = h.runs(p, since=t_ws - (longest + 3) * line.round_s - 600, until=(s["we"] + m0) * MIN)
        stepped = h.level[p] * STEP if step_own else STEP
        s["fig"] = figures(runs, h.level[p], line.sd, rng, confirm, step_at=s["onset"], stepped=stepped)
    first = -m0
    for form in FORMS:
        hold = form.hold(line.round_s)
        r = res[form.name]
        loc = [{c: to_grid(*medians(f[c], form.window), h.phase, m0, n) for c in nodes}
               for h, f in zip(hosts, loc_fig)]
        exc: list[dict] = [{} for _ in hosts]  # host -> pair -> minutes it is beyond the threshold
        for s in onsets:
            s["ratios"] = None
        for p in remote:
            ratios = [list(map(truediv, to_grid(*medians(f, form.window), h.phase, m0, n), loc[k][p[0]]))
                      for k, (h, f) in enumerate(zip(hosts, rem_fig[p]))]
            med = cohort_median(ratios)
            for k in range(len(hosts)):
                beyond = [i for i, (x, y) in enumerate(zip(ratios[k], med)) if x > hi * y or x < lo * y]
                if beyond:
                    exc[k][p] = beyond
            for s in onsets:
                if s["p"] == p:
                    s["ratios"] = [x[s["ws"]:s["we"]] for x in ratios]
        for k in range(len(hosts)):
            e = episodes(sorted(set().union(*exc[k].values())), first, hold)
            r["hw"] += 1
            r["alerted_hw"] += e > 0
            r["episodes"] += e
        for s in onsets:
            k, p, h = s["h"], s["p"], hosts[s["h"]]
            ws, we = s["ws"], s["we"]
            rem = to_grid(*medians(s["fig"], form.window), h.phase, ws + m0, we - ws)
            ratios = s["ratios"]
            ratios[k] = list(map(truediv, rem, loc[k][p[0]][ws:we]))
            med = cohort_median(ratios)
            idx = {ws + i for i, (x, y) in enumerate(zip(ratios[k], med)) if x > hi * y or x < lo * y}
            # The host's other pairs, as the healthy week had them.
            for q, v in exc[k].items():
                if q != p:
                    idx.update(v[bisect.bisect_left(v, ws):bisect.bisect_left(v, we)])
            ttf, busy = time_to_fire(sorted(idx), s["oi"], hold)
            # Minutes from the onset itself (its evaluation is at most 60 s after it).
            r["ttf"].append(ttf + ((s["oi"] + m0) * MIN - s["onset"]) / MIN)
            r["busy"] += busy


def run_line(line: Line, weeks: int, steps: int, confirm: bool, step_own: bool, seed: int) -> dict:
    rng = random.Random(f"{seed}:{line.name}")
    cws = max(1, math.ceil(weeks / line.cohort))
    per = [steps // cws + (1 if i < steps % cws else 0) for i in range(cws)]
    res = {f.name: {"hw": 0, "alerted_hw": 0, "episodes": 0, "ttf": [], "busy": 0} for f in FORMS}
    for i in range(cws):
        cohort_week(line, rng, per[i], confirm, step_own, res)
    return res


def fmt_ttf(ttf: list[float]) -> str:
    """Share within 4 h | within 6 h | p50 | p99."""
    if not ttf:
        return "– | – | – | –"
    s = sorted(ttf)

    def share(limit):
        return sum(1 for x in s if x <= limit) / len(s)

    def q(f):
        x = s[int(f * (len(s) - 1))]
        return "never" if x > LIMIT_MIN else f"{x:.0f} min"
    return f"{share(PROMISE_MIN):.1%} | {share(LIMIT_MIN):.1%} | {q(0.5)} | {q(0.99)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weeks", type=int, default=100, help="healthy host-weeks per line (whole cohort-weeks)")
    ap.add_argument("--steps", type=int, default=200, help="onsets per line")
    ap.add_argument("--only", help="lines whose name contains this")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-confirm", action="store_true", help="a daemon without confirmation runs")
    ap.add_argument("--step-own", action="store_true", help="the pair rises 12%% over its host's own level")
    args = ap.parse_args()
    print(f"threshold ±{THRESHOLD:.0%}; "
          + "; ".join(f"{f.name}: medians of {f.window}, for {f.hold_min} / {f.long_hold_min} min at 5 / 30-min "
                      "rounds" for f in FORMS)
          + f"; onset: one remote pair {STEP - 1:.0%} above {'its own level' if args.step_own else 'the cohort'}; "
          f"{'no confirmation runs' if args.no_confirm else 'confirmation runs'}; "
          f"{args.weeks} host-weeks and {args.steps} onsets per line (seed {args.seed})")
    head = " | ".join(f"{f.name}: {c}" for f in FORMS for c in (
        "host-weeks alerted / 100", "alerts / 100 host-weeks", "fires ≤ 4 h", "≤ 6 h", "p50", "p99", "busy"))
    print(f"| line | host-weeks | {head} | s |")
    print("|---" * (3 + 7 * len(FORMS)) + "|")
    total = time.monotonic()
    for line in LINES:
        if args.only and args.only not in line.name:
            continue
        t0 = time.monotonic()
        res = run_line(line, args.weeks, args.steps, not args.no_confirm, args.step_own, args.seed)
        cells = []
        for f in FORMS:
            r = res[f.name]
            hw = r["hw"]
            cells.append(f"{100 * r['alerted_hw'] / hw:.1f} | {100 * r['episodes'] / hw:.1f} | {fmt_ttf(r['ttf'])} "
                         f"| {r['busy'] / max(len(r['ttf']), 1):.1%}")
        print(f"| {line.name} | {res[FORMS[0].name]['hw']} | {' | '.join(cells)} "
              f"| {time.monotonic() - t0:.0f} |", flush=True)
    print(f"total {time.monotonic() - total:.0f} s")


if __name__ == "__main__":
    main()
