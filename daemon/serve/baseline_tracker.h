// The baseline's life cycle in the daemon: adopt the persisted baseline when
// it was measured on the same topology (nodes, distances) with the same
// settings, whatever kernel, microcode, firmware, CPU model or numaprobe
// version the host runs now, and whatever its runtime facts (THP, NUMA
// balancing, cpufreq, command line, tiering, node memory and hugepage pools,
// memory errors) are: such changes are recorded with the baseline (the last
// kMaxHostChanges) and exported (numaprobe_host_change_timestamp_seconds), the
// old baseline stays the reference. Otherwise record a new one from the first failure-free
// rounds, persist it, and say why the current one exists
// (numaprobe_baseline_info{origin}).
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/serve/baseline.h"
#include "daemon/serve/snapshot.h"
#include "daemon/serve/state_format.h"

namespace numaprobe::daemon {

// The settings that change what a probe measures, as "key=value;..." (kept in
// the state file, so a change is logged by name): a baseline taken with other
// settings is not comparable to today's figures.
std::string MeasurementSettings(const Config& config);

// What the daemon sees of the host now: every fact by field (HostFacts and
// the runtime facts), and EDAC's error counters.
struct HostObservation {
  HostObservation(std::map<std::string, std::string> f = {},  // NOLINT: a bare fact map is an observation
                  std::optional<MemoryErrorCounts> errors = std::nullopt)
      : facts(std::move(f)), memory_errors(errors) {}
  std::map<std::string, std::string> facts;
  std::optional<MemoryErrorCounts> memory_errors;
};

class BaselineTracker {
 public:
  BaselineTracker(std::string state_directory, int rounds);

  // On every (re)plan and every SIGHUP. The state file is also how `numaprobe
  // baseline reset` and `baseline accept` reach a running daemon: they replace
  // the baseline in the file by a marker, then SIGHUP. `topology` is the
  // TopologySignature; `unix_now` dates a fact change.
  void Load(const std::string& fingerprint, const std::string& settings, const std::string& topology,
            const HostObservation& host, double unix_now);
  // Every round: records each fact that changed since the last look as a
  // host change (logged, kept, saved with a complete baseline), whether the
  // baseline is complete or still being recorded.
  void ObserveHost(const HostObservation& host, double unix_now);
  // A reload: the state directory and the number of rounds (which applies to
  // a recording in progress at once).
  void Reconfigure(std::string state_directory, int rounds);

  // One round: BeginRound, then Observe the final result of each probe the
  // baseline covers (latency and bandwidth: a median, or a failure), then
  // EndRound, which feeds the recorder only if none of them failed, so the
  // baseline has a value for every pair and op.
  void BeginRound();
  void Observe(const BaselineValue& median) { round_values_.push_back(median); }
  void ObserveFailure() { ++round_failures_; }
  void EndRound();

  void Publish(Snapshot& s) const;
  // The complete baseline's value for the series of `figure` (same probe,
  // CPU, pair and op); none while recording or for a series it lacks.
  std::optional<double> ValueOf(const BaselineValue& figure) const;

 private:
  std::string state_directory_;
  int rounds_;
  BaselineRecorder recorder_;
  // Load's arguments: the host and settings as they are now.
  struct Now {
    const std::string& fingerprint;
    const std::string& settings;
    const std::string& topology;
    const std::map<std::string, std::string>& facts;
    const std::optional<MemoryErrorCounts>& memory_errors;
    double unix_now;
  };
  // Load's cases, by what the state file holds: a marker, garbage, a complete
  // baseline; with none of those, the baseline in memory goes on if it still
  // matches, else a new one starts.
  void ActOnMarker(const LoadedState& state, const Now& now);
  void RetryMarkerRemoval();
  void ReplaceCorrupt(const LoadedState& state, const Now& now);
  void KeepUnreadable(const std::string& error, const Now& now);
  void AdoptStored(Baseline stored, const Now& now);
  void KeepMine(const Now& now);
  void StartAnew(const Now& now);
  // Whether the baseline in memory (recording or complete) was measured on
  // today's topology with today's settings.
  bool MineMatches(const Now& now) const;
  // "" if `stored` compares with today's figures; otherwise logs why not and
  // returns the origin of the new recording (topology_changed, settings_changed).
  static std::string WhyNotComparable(const Baseline& stored, const Now& now);
  // Adds the host fact changes since `stored` was recorded, logging each,
  // and takes today's facts; true if `stored` changed and must be saved.
  static bool RecordHostChanges(Baseline& stored, const Now& now);
  // Starts recording anew, with the current host's identity.
  void StartRecording(const Now& now);
  // The facts with "memory_errors_since_baseline" (none, corrected,
  // uncorrected, no_edac) counted from `baseline`'s EDAC counters; counters
  // that went down (a reboot, a driver reload) count from zero again.
  std::map<std::string, std::string> WithMemoryErrors(const HostObservation& host, Baseline& baseline);
  // Writes the state file; on failure (full or read-only directory) logs the
  // path and errno text and marks the save pending: EndRound retries it every
  // round until it succeeds, so the file catches up once space returns.
  void Persist(const Baseline& baseline, const char* what);

  // first_start | restored | accepted | reset | settings_changed | topology_changed | state_file_corrupt |
  // state_file_unreadable
  std::string origin_;
  std::vector<BaselineValue> round_values_;
  int round_failures_ = 0;
  // numaprobe_state_last_write_successful / numaprobe_state_write_failures_total.
  bool save_pending_ = false;
  bool last_write_ok_ = true;
  std::uint64_t write_failures_ = 0;
  // The file_id (LoadedState) of a marker acted on that could not be
  // removed, or of a corrupt file being replaced ("" if none).
  std::string handled_file_;
  bool marker_removal_pending_ = false;
  std::optional<MemoryErrorCounts> errors_since_baseline_;
};

}  // namespace numaprobe::daemon
