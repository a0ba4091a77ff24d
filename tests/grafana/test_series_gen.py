# SPDX-License-Identifier: Apache-2.0
"""series_gen's model of an accept (`numaprobe baseline accept`), read back
from what it generates for the accepted_rollout scenario, against the daemon's
rule (SeriesHistory::AcceptLevel, ResultModel::AcceptLevel): a series with at
least 5 figures since the host change in its recent window (the last 9) arms
at the accept with their median; one with fewer records from them and arms at
its 5th figure since the change with their median; the host changes are
cleared and the origin becomes "accepted" at the accept. No promtool: the
detection scenario itself runs in test_detection.py."""
from __future__ import annotations

import random
import statistics

import pytest

import detection_scenarios as ds
import series_gen as sg


class RecordingHostSim(sg.HostSim):
    """A HostSim that keeps every series' figures and baseline."""

    def __init__(self, *args):
        super().__init__(*args)
        self.runs: list[tuple[str, sg.SeriesRun]] = []

    def figure_series(self, kind, *args, **kwargs):
        run = super().figure_series(kind, *args, **kwargs)
        self.runs.append((kind, run))
        return run


@pytest.fixture(scope="module")
def hosts():
    """The accepted_rollout scenario's hosts, built as Scenario.series does."""
    scn = ds.accepted_rollout(25).scenario
    rng = random.Random(scn.seed)
    out = {}
    for h in scn.hosts:
        sim = RecordingHostSim(scn, h, random.Random(rng.random()))
        sim.build()
        out[h.name] = sim
    return out


def tokens(sim: sg.HostSim, name: str) -> list[list]:
    return [sd.tokens for sd in sim.series if sd.labels["__name__"] == name]


def test_each_series_takes_the_level_since_the_change(hosts):
    paths = {}
    for name, sim in hosts.items():
        (accept, change), = sim.accepts
        assert change == next(r.at_s + r.down_s for r in sim.reboots), "the reboot's kernel change"
        for kind, run in sim.runs:
            figures = [(t, v) for t, v in run.fig if v is not None]
            since = [v for t, v in figures if change <= t <= accept][-sg.PEER_WINDOW:]
            changes = run.baseline.values[1:]
            if len(since) >= sg.RECENT_WINDOW:
                assert changes == [(accept, statistics.median(since))]
                paths.setdefault((name, kind), set()).add("armed at once")
            else:
                fifth = [(t, v) for t, v in figures if t >= change][sg.RECENT_WINDOW - 1]
                first_five = [v for t, v in figures if t >= change][:sg.RECENT_WINDOW]
                assert changes == [(accept, None), (fifth[0], statistics.median(first_five))]
                paths.setdefault((name, kind), set()).add("recorded")
    # What the scenario shows: at 5-min rounds every series arms at once; at
    # 30-min rounds the latency series do (their first figure after the
    # reboot was confirmed by 4 runs), the bandwidth series record.
    for name, sim in hosts.items():
        fast = sim.h.refresh_s == 300
        assert paths[(name, "latency")] == {"armed at once"}
        assert paths[(name, "bandwidth")] == ({"armed at once"} if fast else {"recorded"}), name


def test_no_confirmation_while_recording(hosts):
    """A bandwidth series that records after the accept gets figures at its
    rounds only: none within CONFIRM_GAP_S of another."""
    for sim in hosts.values():
        (accept, _), = sim.accepts
        for kind, run in sim.runs:
            armed_again = next((t for t, v in run.baseline.values[1:] if v is not None), None)
            if armed_again is None or armed_again == accept:
                continue
            times = [t for t, v in run.fig if v is not None and accept <= t <= armed_again]
            gaps = [b - a for a, b in zip(times, times[1:])]
            assert gaps and min(gaps) > sg.CONFIRM_GAP_S[1], (kind, gaps)


def test_published_state_of_the_accept(hosts):
    for sim in hosts.values():
        (accept, change), = sim.accepts
        after, before = accept // sg.STEP_S + 1, accept // sg.STEP_S - 1
        for name in ("numaprobe_host_change_timestamp_seconds", "numaprobe_host_last_change_timestamp_seconds"):
            (series,) = tokens(sim, name)
            assert series[before] in (change, None), name  # None: a failed scrape
            assert all(not isinstance(v, float) for v in series[after:]), f"{name} not cleared"
        origin = {sd.labels["origin"]: sd.tokens for sd in sim.series
                  if sd.labels["__name__"] == "numaprobe_baseline_info"}
        assert set(origin) == {"restored", "accepted"}
        assert origin["accepted"][after] in (1.0, None) and origin["accepted"][before] is None
        recording = [sd.tokens for sd in sim.series if sd.labels["__name__"] == "numaprobe_baseline_series"
                     and sd.labels["state"] == "recording"][0]
        expect = sum(1 for _, run in sim.runs if run.baseline.values[1][1] is None)
        assert recording[after] in (float(expect), None) and recording[before] in (0.0, None)
        assert expect == (0 if sim.h.refresh_s == 300 else 12)
        if expect:
            (since,) = tokens(sim, "numaprobe_baseline_recording_since_timestamp_seconds")
            (expected,) = tokens(sim, "numaprobe_baseline_expected_armed_timestamp_seconds")
            assert since[after] in (float(accept), None)
            assert expected[after] in (float(accept + sg.RECENT_WINDOW * sim.h.refresh_s), None)


def test_accept_while_the_daemon_is_down_is_refused():
    scn = sg.Scenario("x", [sg.Host("a")], 3 * 3600, reboots=[sg.Reboot("a", 3600)], accepts=[sg.Accept("a", 3700)])
    with pytest.raises(ValueError, match="accept at 3700 s on a: its daemon is not running"):
        scn.series()
