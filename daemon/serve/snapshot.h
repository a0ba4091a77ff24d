// SPDX-License-Identifier: Apache-2.0
// Snapshot: everything /metrics and the landing page show, as one immutable
// value. A change is a copy of the current one with some fields changed,
// swapped into the ResultStore (result_store.h): by the results model
// (results/result_model.h) when a run lands and at its other events, with the
// scheduler's own fields (duty cycle, lock wait, rounds) through the model's
// Land and Publish, by `serve` after a reload (cli/cmd_serve.cc), and by the
// node feature export on serve's main thread, for its own status
// (node_feature_export.h). A scrape
// copies the current shared_ptr and never waits for, or triggers, a probe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/common/host_info.h"
#include "daemon/common/runtime_facts.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/probing/probe_lock.h"

namespace numaprobe::daemon {

// A successful, placement-verified record and when it completed (Unix seconds).
struct Timed {
  RecordPtr record;
  double unix_seconds = 0;
  // Runs of this very series (kind and target) that failed since `record`;
  // the figure is withdrawn when it reaches kFailuresWithdrawing
  // (snapshot_update.cc).
  int failed_runs = 0;
};

// One change of a host fact since the baseline was recorded (kept with the
// baseline in the state file): the figures are still compared with the
// baseline, and the change is exported so an alert can name it.
struct HostChange {
  std::string field;  // kernel, microcode, thp_enabled, node1.hugepages_2048kB, ... (docs/runbook.md)
  std::string before;
  std::string after;
  double unix_seconds = 0;  // when the daemon first saw `after`
};

// What exactly a probe measured on one memory node, for numaprobe_probe_config_info
// (labels include mem_node: page sizes can differ between nodes).
struct ProbeConfigInfo {
  std::string probe;
  std::map<std::string, std::string> labels;  // page_size, buffer_bytes, stride, ...
};

// A host's worst drift of one kind and op: the worst node pair's recent
// median over its baseline (results/derived.h).
struct DriftRatio {
  std::string probe;
  std::string op;
  double ratio = 0;
};

// A remote pair's peer median over its CPU node's local pair's (results/derived.h).
struct PairRatio {
  std::string probe;
  int cpu_node = -1;
  int mem_node = -1;
  std::string op;
  double ratio = 0;
};

// How far the planned series are in recording their baselines.
struct BaselineProgress {
  int armed = 0;
  int recording = 0;
  // Figures recorded / figures needed, over the series still recording (1 when none does).
  double recorded_ratio = 1;
  // The earliest recording start among them, and when the schedule expects
  // the last of them armed (its start plus baseline.rounds refresh intervals);
  // none while no series records.
  std::optional<double> recording_since;
  std::optional<double> expected_armed;
};

struct Snapshot {
  HostInfo host;
  std::string fingerprint;
  FigureContext figure_context;  // how the figures are labelled (per-CPU mode, threads)

  // (cpu_node, mem_node) -> firmware distance, for every planned node pair.
  std::map<std::pair<int, int>, int> distances;

  // Latest successful record per planned series of every kind. A pair whose
  // last probe found its memory on the wrong node (or could not verify it)
  // has no entry: a "remote" figure is never published from local memory.
  std::vector<Timed> figures;
  // The kinds the current configuration probes (by name).
  std::set<std::string> probes;
  // The published records of `kind`, for its figures and sections.
  std::vector<TimedRecord> FiguresOf(const ProbeKind& kind) const;

  // What the daemon derived from its series (results/derived.h): the armed
  // baselines of the planned series, their spread ((max - min) / median of
  // the figures each was recorded from), and how far the others are.
  std::vector<BaselineValue> baseline;
  std::vector<BaselineValue> baseline_spread;
  BaselineProgress baseline_progress;
  // Every planned series armed.
  bool baseline_complete = false;
  // Why the current baseline exists: first_start, restored (from the state
  // file), accepted (numaprobe baseline accept, or a change baseline.accept_changes
  // declares planned), reset (numaprobe baseline reset), settings_changed,
  // topology_changed, state_file_corrupt or state_file_unreadable.
  std::string baseline_origin;
  // Host fact changes since the baseline was recorded (or, while it is being
  // recorded, since recording started), oldest first, at most kMaxHostChanges.
  std::vector<HostChange> host_changes;
  // The runtime host facts as last read (every round and on SIGHUP).
  RuntimeFacts runtime_facts;
  // EDAC errors counted since the baseline; absent without EDAC.
  std::optional<MemoryErrorCounts> memory_errors_since_baseline;
  // Median of each latency/bandwidth series' last 5 successful figures
  // (SeriesHistory::kWindow); a series appears once it has 5.
  std::vector<BaselineValue> recent_medians;
  // The same over the last 9 (SeriesHistory::kPeerWindow): what the peer
  // comparison's remote/local ratio is made of.
  std::vector<BaselineValue> peer_medians;
  // The worst drift per kind and op, and each remote pair's remote/local
  // ratio of the peer medians (results/derived.h).
  std::vector<DriftRatio> worst_drift;
  std::vector<PairRatio> remote_local_ratios;
  // Expected seconds between two figures of one series: max(schedule.interval,
  // duration of the last complete round), times rotation_rounds.
  double refresh_interval_seconds = 0;
  // Rounds a cycle takes: 1, or more when pairs rotate (rotation.h).
  int rotation_rounds = 1;
  bool test_fault_injection_active = false;

  // Counters, pre-populated with 0 for the series known in advance.
  std::map<std::pair<std::string, std::string>, std::uint64_t> runs_total;        // (probe, result)
  std::map<std::string, double> cpu_seconds_total;                                // probe
  std::map<std::pair<std::string, std::string>, std::uint64_t> discards_total;    // (probe, reason)
  std::map<std::pair<int, std::string>, std::uint64_t> placement_failures_total;  // (mem_node, reason)
  // (probe, cpu_node, mem_node) -> Unix seconds; keyed by the target's pair
  // (core_to_core: cpu_a's node and the line's node).
  std::map<std::tuple<std::string, int, int>, double> last_success;

  double duty_cycle_ratio = 0;  // probe CPU seconds / window seconds, trailing 10 minutes
  // The budget in force: the learning budget while a planned series records
  // its baseline, else schedule.duty_cycle (the scheduler's SetBudget).
  double duty_cycle_budget_ratio = 0;
  std::vector<ProbeConfigInfo> probe_config;
  bool config_reload_successful = true;
  // The state file (ResultModel::Save): whether the last write worked,
  // and how many failed (full or read-only state directory).
  bool state_write_successful = true;
  std::uint64_t state_write_failures_total = 0;
  // The node feature file (node_feature_export.h): the same two, written by
  // serve's main thread; true while the export is off.
  bool node_features_write_successful = true;
  std::uint64_t node_features_write_failures_total = 0;
  double config_reload_unix_seconds = 0;
  std::uint64_t rounds_completed = 0;
  // Wall time probes waited for another numaprobe process's probe (ProbeLock).
  double probe_lock_wait_seconds = 0;
  // Who holds the probe lock while a probe waits for it (none otherwise).
  std::optional<ProbeLockHolder> probe_lock_holder;
  // Every representative (rotation.h) has run once since start: the first
  // round after a start runs them alone.
  bool ready() const { return rounds_completed > 0; }
};

}  // namespace numaprobe::daemon
