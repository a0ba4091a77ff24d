// SPDX-License-Identifier: Apache-2.0
// The one owner of what happens after a probe finishes: it counts the run and
// publishes or withdraws its figure, adds the figure to its series' recent
// figures and, while that series records, to its baseline, decides whether
// the figure needs confirming, records host changes, keeps everything it has
// learnt in the state file and restores it after a restart, and publishes the
// Snapshot once per event (a state write the event makes due is part of it).
// It also keeps the budget the scheduler says it uses (UseBudget), so that no
// replan can publish another. The scheduler (serve/scheduler.cc) only paces:
// it reports typed events (a run landed with the loop's facts, a round ended,
// the duty cycle observed, a lock wait, a plan adopted, the budget changed)
// and writes no field of the Snapshot itself.
//
// Learning is per series (results/series_history.h): a series is baselined
// from its own figures; a failed run costs only its own figure; a series that
// joins the plan later (an op or a pair added, a cpuset that grows) records a
// baseline of its own without a reset, and its arrival is a host change; a
// cpuset change keeps the recent figures of every series still planned.
// What resets the baseline: an operator's accept or reset, a change of the
// host's topology (every series), a change of a kind's measurement settings
// (that kind's series), and a configured accept of a planned host change
// (baseline.accept_changes).
//
// Persistence: the state file is written at most every kSaveSpacingNs, and at
// once when a host fact changes, the baseline's origin changes, an operator's
// request is acted on or the daemon stops; a crash loses at most the figures of the last
// kSaveSpacingNs. A failed write (full or read-only directory) is counted,
// logged once and retried every kRetrySpacingNs.
//
// Thread safety: not thread-safe; owned by the scheduler loop. It writes the
// ResultStore, which serialises writers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/series_key.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/results/derived.h"
#include "daemon/serve/results/host_record.h"
#include "daemon/serve/results/series_history.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/results/state_storage.h"
#include "daemon/serve/round_tasks.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

inline constexpr std::int64_t kSaveSpacingNs = 30'000'000'000;
inline constexpr std::int64_t kRetrySpacingNs = 5'000'000'000;  // after a failed write

// The settings that change what a probe measures, as format 1 of the state
// file kept them for every kind at once ("key=value;..."): only compared with
// a format-1 file.
std::string LegacyMeasurementSettings(const Config& config);
// The same per kind with a baseline: its SettingsFingerprint and the memory
// settings (memory.budget caps automatically sized buffers). A kind whose
// settings changed re-records its series.
std::map<std::string, std::string> MeasurementSettingsByKind(const Config& config);

// What the model is told at every (re)plan.
struct PlannedHost {
  const Config& config;
  const kernels::Topology& topology;
  const Plan& plan;
  const HostInfo& host;
  std::string fingerprint;         // HostFingerprint
  std::string topology_signature;  // TopologySignature
  std::set<SeriesKey> series;      // every baseline series the plan probes
  // Until a round completes, the configured interval is the best estimate.
  double refresh_interval_seconds = 0;
  bool fault_injection_active = false;  // a test scales the figures (common/test_hooks.h)
};

// What the loop's pacing and lock waiting say, published with the run that
// ends (ResultModel::Land) or while it waits (LockWaited, DutyObserved).
struct LoopFacts {
  double duty_cycle_ratio = 0;   // Budget::ObservedRatio
  double lock_wait_seconds = 0;  // LockWaitMeter: every wait since start
};

// When now is (both clocks: monotonic paces the writes, Unix dates the facts).
struct Moment {
  std::int64_t monotonic_ns = 0;
  double unix_seconds = 0;
};

class ResultModel {
 public:
  // `save_spacing_ns`: kSaveSpacingNs unless a simulation says otherwise.
  ResultModel(ResultStore& store, std::unique_ptr<StateStorage> storage, const Config& config,
              std::int64_t save_spacing_ns = kSaveSpacingNs);

  // A start, reload or cpuset change. The first call restores the state file
  // (and acts on an operator's request waiting beside it).
  void Plan(const PlannedHost& planned, const HostObservation& host, const RuntimeFacts& runtime, Moment now);
  // A reload: where the state lives, how many figures a baseline needs, which
  // host changes are accepted (applied at the next Plan, which follows).
  void Reconfigure(std::unique_ptr<StateStorage> storage, const Config& config);
  // Every round: the facts as they are now; changes are recorded (and an
  // accepted change re-records the baseline).
  void ObserveHost(const HostObservation& host, const RuntimeFacts& runtime, Moment now);
  // SIGHUP without a new configuration: acts on an operator's request
  // (`numaprobe baseline accept`/`reset`), and retries a state file that could
  // not be read at start.
  void ReloadState(Moment now);

  // One run landed, with the loop's facts at its end (the lock no longer
  // waited for). True when the figure lies beyond its band and needs
  // confirmation runs (results/series_history.h).
  bool Land(const Task& task, const ProbeRun& run, Moment now, const LoopFacts& loop);
  // What the kind's thread search found for `key` (SeriesHistory), if it did.
  std::optional<int> FoundThreads(const SeriesKey& key) const;
  // The records of the published figures, every kind's (Snapshot::figures):
  // what a run whose figure is read against another kind's is handed
  // (ProbeRunner::published).
  std::vector<RecordPtr> PublishedRecords() const;
  // The events the scheduler reports besides runs, one publication each:
  // the observed duty cycle while nothing lands (idle, waiting);
  void DutyObserved(double ratio);
  // a run still waiting for the probe lock: the total so far and who holds it;
  void LockWaited(double total_seconds, std::optional<ProbeLockHolder> holder);
  // a complete round, of `rotation_rounds` in the cycle: how often each
  // series gets a figure at the current schedule (for the expected arming
  // time exported while series record, and the staleness rules).
  void RoundEnded(RefreshOf refresh, int rotation_rounds);
  // The duty-cycle budget the scheduler paces by from now on (the learning
  // budget while a series records, else schedule.duty_cycle): one
  // publication. Until the first call: schedule.duty_cycle at construction.
  void UseBudget(double ratio);

  // What the scheduler keeps across restarts; restored by the first Plan.
  // `urgent`: saved at the next Save, not at the spacing (a finished cycle
  // of a kind on a schedule of its own: rare, and a crash loop must not
  // repeat it).
  const ScheduleMemory& schedule() const { return contents_.schedule; }
  void KeepSchedule(ScheduleMemory schedule, bool urgent = false);

  // Whether a planned series is still recording its baseline (the scheduler
  // then spends the learning budget). The kinds on a schedule of their own
  // (ProbeKind::OwnScheduleOf) have a budget of their own: not theirs.
  bool Recording() const;
  // Whether a planned series of `kind` is still recording its baseline.
  bool Recording(std::string_view kind) const;

  // Writes the state file if something changed and kSaveSpacingNs has passed
  // since the last write (or `now` is a stop: `force`); publishes only if
  // that changed what the snapshot says of the writes.
  void Save(Moment now, bool force = false);

 private:
  void Restore(Moment now);
  void AdoptStored(StateContents stored, int format, const std::string& legacy_settings, Moment now);
  void StartOver(const char* origin, Moment now);
  void Rerecord(const char* origin, Moment now);
  // An accept (`numaprobe baseline accept`, baseline.accept_changes): each
  // planned series arms at the level measured since the latest host change
  // where it has enough figures since (SeriesHistory::AcceptLevel), and
  // records anew where it has not; the log says how many of each.
  void AcceptLevel(Moment now);
  void ObserveHostFacts(Moment now);
  void CompareSettings(Moment now);
  void TrackPlannedSeries(const std::set<SeriesKey>& series, Moment now);
  void AcceptPlannedChanges(Moment now);
  void CheckRequest(Moment now);
  // Removes the request file once acted on; counts and retries a failure.
  void RemoveRequest();
  // Save without publishing: the event that calls it publishes once.
  void Write(Moment now, bool force = false);
  // Whether the last write worked, and how many failed.
  std::pair<bool, std::uint64_t> WriteStatus() const;
  // The one publication of an event: `also` (the run's counts, the plan's
  // facts), then everything the model holds (Refresh).
  void PublishView(const std::function<void(Snapshot&)>& also);
  void Refresh(Snapshot& s);
  void MarkChanged(bool urgent);
  bool SeriesRecording(const SeriesKey& key) const;

  ResultStore& store_;
  std::unique_ptr<StateStorage> storage_;
  // From the configuration (Reconfigure).
  int figures_needed_ = 0;                                 // baseline.rounds
  std::vector<std::string> accept_changes_;                // baseline.accept_changes: "field=value" or "field=*"
  bool per_cpu_ = false;                                   // targets.per_cpu
  std::map<std::string, std::string> settings_;            // MeasurementSettingsByKind
  std::string legacy_settings_;                            // LegacyMeasurementSettings
  std::set<std::string, std::less<>> own_schedule_kinds_;  // ProbeKind::OwnScheduleOf
  // From the last Plan and look at the host.
  std::string fingerprint_;
  std::string topology_signature_;
  HostObservation last_host_;
  std::set<SeriesKey> planned_;
  RefreshOf refresh_;
  double budget_ratio_;  // UseBudget

  StateContents contents_;  // what the state file holds
  // Of the planned series; rebuilt by Refresh when `stale_`, else kept up to
  // date by Land one series at a time.
  DerivedFigures derived_;
  bool stale_ = true;
  bool restored_ = false;
  // A state file that exists but cannot be read is never overwritten; the
  // model keeps what it learns in memory and says so until it can read it.
  std::string unreadable_;
  bool dirty_ = false;
  bool urgent_ = false;
  std::int64_t save_spacing_ns_;
  std::int64_t last_save_ns_ = 0;
  bool save_failing_ = false;
  // An operator's request acted on whose file could not be removed (a
  // read-only directory): remembered by its id, so never acted on again, and
  // its removal retried with every save until it succeeds.
  bool request_removal_pending_ = false;
  bool last_write_ok_ = true;
  std::uint64_t write_failures_ = 0;
  std::pair<bool, std::uint64_t> published_write_{true, 0};  // WriteStatus() as last published
};

}  // namespace numaprobe::daemon
