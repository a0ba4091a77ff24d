#!/usr/bin/env python3
"""Design calculation for the peer alert NumaProbeRemoteLocalRatioOutlier
(docs/detection.md, "Thresholds"): one alert per host and remote pair, as the
rule was, or one per host on the worst of its remote pairs, as it is now? A Monte Carlo
of what a cohort of daemons publishes and what either form of the rule decides
from it, on the noise model of tests/grafana/series_gen.py and
bench/detection_thresholds.py.

The two forms. For a host h and a remote pair p = (cpu_node, mem_node), the
deviation d = ratio(h, p) / median over the cohort's hosts (h included) of
ratio(., p) - 1, where ratio is the remote/local ratio of the recent medians
(the daemon's numaprobe_memory_latency_recent_remote_local_ratio over the
recorded ...:peer_median, minus 1; the cohort median is
PromQL's quantile(0.5), the mean of the middle two for an even count).
- per pair (the rule before the daemon published the ratios): |d(h, p)| > 8%
  at every evaluation for `for: 1h`;
  one alert per host and pair;
- per host (the rule now, ...:peer_deviation_max): max over the host's remote
  pairs of |d(h, p)| > 8% for
  `for: 1h`; one alert per host.
The rule is evaluated every 60 s; an alert fires at the first evaluation at
which its condition has held at every evaluation of the last hour (61
evaluations), and an episode is counted once, however long it fires.

What the daemon publishes (as series_gen.py, every assumption here):
- A host runs rounds R x U(0.8, 1.2) apart (R = 5 or 30 min), one round
  timeline per host; each latency pair is measured once a round, at its own
  offset in the round (pairs spread over 10% of a 5-min round, 90% of a 30-min
  round, in pair order, as series_gen.py spreads a host's probes).
- A figure = true level x (1 + N(0, sd)), sd 2% (the promised latency noise) or
  1.5% (idle machines); one figure per series about once a day is 15% high
  (24 h x U(0.75, 1.25) apart); 1% of the runs are disturbed (no figure).
- The recent median = median of the series' last 5 figures, published at each
  figure from the 5th on.
- Confirmation runs, as the daemon does them (docs/detection.md, "What is
  compared with what"; not in the brief's model, see --no-confirm): a figure
  more than 5% above the series' baseline (the median of 15 figures recorded
  at the healthy level) while its recent median is inside that band makes the
  daemon measure the pair 4 more times next, each 30-120 s after the previous
  one; round runs go on meanwhile, and no new confirmation starts while some
  are pending (detection_thresholds.py). The step below is confirmed too: the
  baseline predates it.
- The ratio a host publishes for a remote pair = recent median(remote pair) /
  recent median(local pair of its cpu_node), the local pair a series of the
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

Per line of the table:
- false alarms on healthy cohorts, per 100 host-weeks, for each form: host-
  weeks with at least one alert episode, and alert episodes (per pair: summed
  over the host's pairs). Each cohort-week is simulated from 2 h before the
  week (plus the rounds the first recent medians need); episodes count when
  they start firing within the week.
- a sustained +12% step on one remote pair of one host (host, pair and onset
  drawn at random, onset uniform over the week), on the background of a
  simulated healthy cohort-week (several steps share one cohort-week, each on
  its own): the share of steps whose alert (that pair's, or the host's) starts
  firing within 4 h of the onset, and the p50 / p99 time to fire ("never" =
  not within 4 h). An alert that was already firing at the onset (a false
  alarm in progress) has to end and start again to count: the share of such
  steps is shown ("busy").
- the threshold the per-host form would need for the host-weeks with an alert
  to be no more than the per-pair form's at 8% (the smallest 0.001 above the
  hosts' "critical" level: the largest x at which the host's max |d| exceeded
  x for a whole hour in the week); ">= x" when the per-pair form had no false
  alarm at all in the sample (then x is the largest critical level seen: no
  per-host alarm at any threshold above it either).

  bench/peer_thresholds.py [--weeks 100] [--steps 200] [--only NAME] [--seed 1]
                           [--no-confirm]

Not a test. Runtime grows with hosts x pairs x figures: an 8-node line (100
host-weeks, 200 steps) took 34-44 s at 5-min rounds and 17-23 s at 30-min
rounds, a 2-node line 1-2 s; the defaults' 20 lines 354 s (one core, under
nice 19 beside a C++ build). At 100 host-weeks a line resolves rates of a few
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
FOR_MIN = 60  # for: 1h at 1-min evaluations: 61 evaluations in a row
LIMIT_MIN = 240  # a 12% outlier should fire within 4 h
WINDOW, BASELINE, CONFIRM, BAND = 5, 15, 4, 0.05
CONFIRM_GAP_S = (30, 120)
OUTLIER, MISSED = 1.15, 0.01
COHORT_SD, COHORT_CLIP = 0.015, 0.03
STEP = 1.12
LEAD_MIN = 120  # evaluated minutes before the week (and before a step's onset)


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


def series(runs: list[float], level: float, sd: float, rng: random.Random, confirm: bool,
           step_at: float = math.inf) -> tuple[list[float], list[float]]:
    """One latency series: the times and values of its recent medians, from
    the daemon's runs at `runs` (plus confirmation runs), the level x STEP
    from step_at on. Vectorised: the round figures first, then the rare
    figures beyond the confirmation band in order (the outlier goes to the
    first round figure at or after its time, never to a confirmation run)."""
    gauss, rnd, unif = rng.gauss, rng.random, rng.uniform
    base = sorted(level * (1 + gauss(0, sd)) for _ in range(BASELINE))[BASELINE // 2]
    band = base * (1 + BAND)
    rt = [t for t in runs if rnd() >= MISSED]
    rv = [level * (1 + sd * z) for z in normals(rng, len(rt))]
    if step_at < math.inf:
        for j in range(bisect.bisect_left(rt, step_at), len(rt)):
            rv[j] *= STEP
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
                    conf.append((c, f * STEP if c >= step_at else f))
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
    k = WINDOW // 2
    meds = [sorted(w)[k] for w in zip(*(vs[j:len(vs) - WINDOW + 1 + j] for j in range(WINDOW)))]
    return ts[WINDOW - 1:], meds


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


def episodes(idx: list[int], first: int) -> int:
    """Alert episodes starting to fire at index >= first."""
    return sum(1 for a, b in runs_of(idx) if b - a >= FOR_MIN and a + FOR_MIN >= first)


def time_to_fire(idx: list[int], onset_i: int) -> tuple[float, bool]:
    """(minutes from the onset's evaluation to the first fresh firing or inf,
    whether the alert was firing at the evaluation before the onset and still
    at the onset)."""
    busy = False
    for a, b in runs_of(idx):
        if b - a < FOR_MIN:
            continue
        f = a + FOR_MIN
        if f < onset_i <= b:
            busy = True
        if f >= onset_i:
            return f - onset_i, busy
    return math.inf, busy


def critical(hm: list[float], idx: list[int], first: int) -> float:
    """The largest x such that hm > x at every minute of some 61-minute
    window ending at index >= first (0 when none above THRESHOLD): a sliding
    minimum over the runs of idx."""
    best = 0.0
    w = FOR_MIN + 1
    for a, b in runs_of(idx):
        if b - a < FOR_MIN:
            continue
        vals = hm[a:b + 1]
        dq: list[int] = []  # indices of increasing values (a monotone queue)
        head = 0
        for j, v in enumerate(vals):
            while len(dq) > head and vals[dq[-1]] >= v:
                dq.pop()
            dq.append(j)
            if dq[head] <= j - w:
                head += 1
            if j >= w - 1 and a + j >= first:
                best = max(best, vals[dq[head]])
    return best


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


def cohort_week(line: Line, rng: random.Random, n_steps: int, confirm: bool, res: dict):
    nodes = range(line.nodes)
    pairs = [(c, m) for c in nodes for m in nodes]
    remote = [p for p in pairs if p[0] != p[1]]
    m0 = -LEAD_MIN  # grid index 0 = minute m0 (the week starts at minute 0)
    n = WEEK // MIN - m0
    start = m0 * MIN - 8 * line.round_s - 600  # 5 figures before the grid starts
    hosts = [Host(line, rng, start, WEEK + 600, pairs) for _ in range(line.cohort)]
    loc = [{c: to_grid(*series(h.runs((c, c)), 1.0, line.sd, rng, confirm), h.phase, m0, n) for c in nodes}
           for h in hosts]
    hi, lo = 1 + THRESHOLD, 1 - THRESHOLD
    exc: list[dict] = [{} for _ in hosts]  # host -> pair -> minutes beyond the threshold
    hm = [None] * len(hosts)  # host -> max |d| over the pairs that ever exceed (else 0)
    # Steps: host, pair, onset (s), window [ws, we) of grid indices, saved ratios.
    steps = []
    for _ in range(n_steps):
        onset = rng.uniform(0, WEEK - LIMIT_MIN * MIN - 600)
        oi = math.ceil(onset / MIN) - m0
        steps.append({"h": rng.randrange(len(hosts)), "p": rng.choice(remote), "onset": onset, "oi": oi,
                      "ws": oi - LEAD_MIN, "we": oi + LIMIT_MIN + 1})
    for p in remote:
        ratios = [list(map(truediv, to_grid(*series(h.runs(p), h.level[p], line.sd, rng, confirm), h.phase, m0, n),
                           loc[k][p[0]]))
                  for k, h in enumerate(hosts)]
        med = cohort_median(ratios)
        for k in range(len(hosts)):
            dev = list(map(truediv, ratios[k], med))
            if max(dev) > hi or min(dev) < lo:
                exc[k][p] = [i for i, x in enumerate(dev) if x > hi or x < lo]
                absd = [abs(x - 1) for x in dev]
                hm[k] = absd if hm[k] is None else list(map(max, hm[k], absd))
        for s in steps:
            if s["p"] == p:
                s["ratios"] = [r[s["ws"]:s["we"]] for r in ratios]
    first = -m0
    for k in range(len(hosts)):
        per_pair = sum(episodes(v, first) for v in exc[k].values())
        union = sorted(set().union(*exc[k].values()))
        per_host = episodes(union, first)
        res["hw"] += 1
        res["pair_hw"] += per_pair > 0
        res["pair_ep"] += per_pair
        res["host_hw"] += per_host > 0
        res["host_ep"] += per_host
        res["crit"].append(critical(hm[k], union, first) if hm[k] is not None else 0.0)
    for s in steps:
        k, p, h = s["h"], s["p"], hosts[s["h"]]
        ws, we = s["ws"], s["we"]
        t_ws = (ws + m0) * MIN
        runs = h.runs(p, since=t_ws - 8 * line.round_s - 600, until=(we + m0) * MIN)
        rem = to_grid(*series(runs, h.level[p], line.sd, rng, confirm, step_at=s["onset"]), h.phase, ws + m0, we - ws)
        ratios = s["ratios"]
        ratios[k] = list(map(truediv, rem, loc[k][p[0]][ws:we]))
        med = cohort_median(ratios)
        idx = [ws + i for i, (r, m) in enumerate(zip(ratios[k], med)) if abs(r / m - 1) > THRESHOLD]
        ttf, busy = time_to_fire(idx, s["oi"])
        res["pair_ttf"].append(ttf)
        res["pair_busy"] += busy
        others = set()
        for q, v in exc[k].items():
            if q != p:
                others.update(v[bisect.bisect_left(v, ws):bisect.bisect_left(v, we)])
        ttf, busy = time_to_fire(sorted(others.union(idx)), s["oi"])
        res["host_ttf"].append(ttf)
        res["host_busy"] += busy
        # Minutes from the onset itself (not its evaluation): the evaluation
        # of index oi is at most 60 s after it.
        delta = (s["oi"] + m0) * MIN - s["onset"]
        res["pair_ttf"][-1] += delta / MIN
        res["host_ttf"][-1] += delta / MIN


def run_line(line: Line, weeks: int, steps: int, confirm: bool, seed: int) -> dict:
    rng = random.Random(f"{seed}:{line.name}")
    cws = max(1, math.ceil(weeks / line.cohort))
    per = [steps // cws + (1 if i < steps % cws else 0) for i in range(cws)]
    res = {"hw": 0, "pair_hw": 0, "pair_ep": 0, "host_hw": 0, "host_ep": 0, "crit": [],
           "pair_ttf": [], "host_ttf": [], "pair_busy": 0, "host_busy": 0}
    for i in range(cws):
        cohort_week(line, rng, per[i], confirm, res)
    return res


def fmt_ttf(ttf: list[float]) -> str:
    if not ttf:
        return "– | – | –"
    s = sorted(ttf)
    share = sum(1 for x in s if x <= LIMIT_MIN) / len(s)

    def q(f):
        x = s[int(f * (len(s) - 1))]
        return "never" if x > LIMIT_MIN else f"{x:.0f} min"
    return f"{share:.1%} | {q(0.5)} | {q(0.99)}"


def matched_threshold(res: dict) -> str:
    """Smallest threshold (0.001 steps) at which the per-host form's host-weeks
    with an alert are no more than the per-pair form's at THRESHOLD."""
    crit = sorted(res["crit"], reverse=True)
    allowed = res["pair_hw"]
    if allowed == 0:
        return f">= {crit[0]:.1%}" if crit and crit[0] > THRESHOLD else f"{THRESHOLD:.1%}"
    # Host-weeks firing at x: those with crit > x. Need count <= allowed.
    x = crit[allowed] if allowed < len(crit) else THRESHOLD
    x = max(x, THRESHOLD)
    return f"{math.floor(x * 1000 + 1e-9) / 1000 + 0.001:.1%}" if x > THRESHOLD else f"{THRESHOLD:.1%}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weeks", type=int, default=100, help="healthy host-weeks per line (whole cohort-weeks)")
    ap.add_argument("--steps", type=int, default=200, help="steps per line")
    ap.add_argument("--only", help="lines whose name contains this")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-confirm", action="store_true", help="a daemon without confirmation runs")
    args = ap.parse_args()
    print(f"threshold ±{THRESHOLD:.0%} for 1 h, step +{STEP - 1:.0%} on one remote pair; "
          f"{'no confirmation runs' if args.no_confirm else 'confirmation runs'}; "
          f"{args.weeks} host-weeks and {args.steps} steps per line (seed {args.seed})")
    print("| line | host-weeks | per pair: host-weeks alerted / 100 | per pair: alerts / 100 host-weeks "
          "| per host: host-weeks alerted / 100 | per host: alerts / 100 host-weeks "
          "| per pair: fires ≤ 4 h | p50 | p99 | per host: fires ≤ 4 h | p50 | p99 | busy at onset (pair / host) "
          "| per-host threshold for per-pair's host-weeks | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    total = time.monotonic()
    for line in LINES:
        if args.only and args.only not in line.name:
            continue
        t0 = time.monotonic()
        r = run_line(line, args.weeks, args.steps, not args.no_confirm, args.seed)
        hw = r["hw"]
        ns = len(r["pair_ttf"])
        print(f"| {line.name} | {hw} | {100 * r['pair_hw'] / hw:.1f} | {100 * r['pair_ep'] / hw:.1f} "
              f"| {100 * r['host_hw'] / hw:.1f} | {100 * r['host_ep'] / hw:.1f} "
              f"| {fmt_ttf(r['pair_ttf'])} | {fmt_ttf(r['host_ttf'])} "
              f"| {r['pair_busy'] / max(ns, 1):.1%} / {r['host_busy'] / max(ns, 1):.1%} "
              f"| {matched_threshold(r)} | {time.monotonic() - t0:.0f} |", flush=True)
    print(f"total {time.monotonic() - total:.0f} s")


if __name__ == "__main__":
    main()
