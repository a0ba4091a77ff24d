// SPDX-License-Identifier: Apache-2.0
// Every figure the daemon derives from what it has learnt of its series,
// computed in this one place and published in the Snapshot, so that the web
// layer only formats: the armed baselines and their spread, the recent and
// peer medians, each host's worst drift per kind and op (what the drift
// alerts compare), the remote/local ratios of the peer medians (what the peer
// alert compares across a cohort) and the baseline's progress.
//
// The rules could compute the drift and peer figures from the per-pair series,
// but that reads every pair of every host once a minute (7-9 s of rule
// evaluation at 1,000 8-node hosts, docs/detection.md); the daemon has both
// at hand.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/probing/probe_kind.h"
#include "daemon/probing/series_key.h"
#include "daemon/serve/results/series_history.h"
#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

// (cpu_node, mem_node, op). In per-CPU mode several CPUs of a node share one.
using PairKey = std::tuple<int, int, std::string>;

// `kind`'s values per pair, each the median over the pair's CPUs, exactly as
// the rules' `quantile without(cpu) (0.5, ...)` would over the published series.
std::map<PairKey, double> PairMedians(const std::vector<BaselineValue>& values, const ProbeKind& kind);

// Each host's worst drift per kind with a drift direction (the sign of its
// confirmation band) and op: the worst node pair's recent median over its
// baseline, each side first the median over the pair's CPUs (PairMedians).
std::vector<DriftRatio> WorstDrift(const std::vector<BaselineValue>& baseline,
                                   const std::vector<BaselineValue>& recent_medians);

// Per kind compared with peers, each remote pair's peer median over that of
// its CPU node's local pair (mem_node == cpu_node); none for a CPU node
// without a local peer median.
std::vector<PairRatio> RemoteLocalRatios(const std::vector<BaselineValue>& peer_medians);

// What the schedule expects of a series while it records: how often it gets a
// figure (its refresh interval, seconds).
struct RefreshOf {
  double every_round_seconds = 0;  // a representative's (rotation.h)
  double cycle_seconds = 0;        // any other series'
  std::set<SeriesKey> every_round;
  // A kind on a schedule of its own (own_schedule.h): its interval, the
  // longest it takes between two figures.
  std::map<std::string, double, std::less<>> own_schedule_seconds;
  double Of(const SeriesKey& key) const {
    if (const auto it = own_schedule_seconds.find(key.probe); it != own_schedule_seconds.end()) return it->second;
    return every_round.contains(key) ? every_round_seconds : cycle_seconds;
  }
};

// What each planned series contributes to the Snapshot, kept up to date one
// series at a time (a run lands every few seconds on a big host, each changes
// one series of a thousand), and written into the Snapshot's derived fields
// (baseline, baseline_spread, recent_medians, peer_medians, worst_drift,
// remote_local_ratios, baseline_progress, baseline_complete).
class DerivedFigures {
 public:
  // Every planned series anew (a plan, a restore, a baseline re-recorded).
  void Rebuild(const std::map<SeriesKey, SeriesHistory>& series, const std::set<SeriesKey>& planned);
  // One series changed (a figure landed); ignored unless planned.
  void Update(const SeriesKey& key, const SeriesHistory& history);
  // `figures_needed`: baseline.rounds.
  void Fill(int figures_needed, const RefreshOf& refresh, Snapshot& s) const;

 private:
  struct Entry {
    std::optional<double> baseline, spread, recent, peer;
    std::size_t recorded = 0;  // figures recorded while not armed
    int accept_figures = 0;    // SeriesHistory::accept_figures: fewer needed after an accept
    double since = -1;         // recording since (Unix seconds), -1: not yet
  };
  static Entry Of(const SeriesHistory& history);
  std::map<SeriesKey, Entry> entries_;  // the planned series with a known kind
};

}  // namespace numaprobe::daemon
