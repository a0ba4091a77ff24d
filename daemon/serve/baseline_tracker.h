// The baseline's life cycle in the daemon: adopt the persisted baseline when
// it belongs to this host fingerprint and was measured with the same settings,
// otherwise record a new one from the first failure-free rounds, persist it,
// and say why the current one exists (numaprobe_baseline_info{origin}).
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <string>
#include <vector>

#include "daemon/serve/baseline.h"
#include "daemon/config/config.h"
#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

// The settings that change what a probe measures, as "key=value;..." (kept in
// the state file, so a change is logged by name): a baseline taken with other
// settings is not comparable to today's figures.
std::string MeasurementSettings(const Config& config);

class BaselineTracker {
 public:
  BaselineTracker(std::string state_directory, int rounds);

  // On every (re)plan and every SIGHUP. The state file is also how `numaprobe
  // baseline reset` reaches a running daemon: it empties the file, then SIGHUP.
  void Load(const std::string& fingerprint, const std::string& settings);
  void Reconfigure(std::string state_directory) { state_directory_ = std::move(state_directory); }

  // One round: BeginRound, then Observe the final result of each probe the
  // baseline covers (latency and bandwidth: a median, or a failure), then
  // EndRound, which feeds the recorder only if none of them failed, so the
  // baseline has a value for every pair and op.
  void BeginRound();
  void Observe(const BaselineValue& median) { round_values_.push_back(median); }
  void ObserveFailure() { ++round_failures_; }
  void EndRound();

  void Publish(Snapshot& s) const;

 private:
  std::string state_directory_;
  int rounds_;
  BaselineRecorder recorder_;
  // first_start | restored | fingerprint_changed | settings_changed | state_file_corrupt | reset
  std::string origin_;
  std::vector<BaselineValue> round_values_;
  int round_failures_ = 0;
};

}  // namespace numaprobe::daemon
