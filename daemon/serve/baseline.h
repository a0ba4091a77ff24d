// The per-pair baseline that drift is measured against: the median of the
// first `rounds` complete rounds after first start (or after `numaprobe
// baseline accept`/`reset`, or after a change that makes old pairs
// meaningless: topology or measurement settings). Kernel, microcode, firmware,
// CPU model and numaprobe upgrades keep it; they are listed in `changes`.
//
// Thread safety: not thread-safe; owned by the scheduler thread.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/runtime_facts.h"
#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

// The host changes a baseline keeps: the most recent ones, oldest dropped
// first. It bounds the state file and numaprobe_host_change_timestamp_seconds
// (at most this many series per host, one per field at most).
inline constexpr std::size_t kMaxHostChanges = 16;

struct Baseline {
  std::string fingerprint;  // HostFingerprint when recorded (also how old state files are matched)
  // TopologySignature (node ids and distances): a baseline is only comparable
  // on the same one. Empty in state files written before it was recorded.
  std::string topology;
  // The host facts (HostFacts and the runtime facts) last seen, and the last
  // kMaxHostChanges changes of them since the baseline was recorded.
  std::map<std::string, std::string> facts;
  std::vector<HostChange> changes;
  // EDAC's counters when recording started: errors since the baseline are
  // counted from them. Absent without EDAC, and in older state files.
  std::optional<MemoryErrorCounts> memory_errors;
  // The measurement settings the values were taken with (MeasurementSettings):
  // a figure measured differently is not comparable to them.
  std::string settings;
  std::string created;  // RFC 3339 UTC, when recording completed
  std::vector<BaselineValue> values;
  // (max - min) / median of the per-round figures of each value, same order
  // and labels as `values`; empty for baselines saved before it was kept.
  std::vector<BaselineValue> spread;
  bool complete = false;
};

class BaselineRecorder {
 public:
  explicit BaselineRecorder(int rounds) : rounds_(rounds) {}

  // Adopts a complete baseline loaded from the state file.
  void Restore(Baseline baseline);
  // Forgets everything and records anew for `fingerprint` and `settings`.
  void Reset(const std::string& fingerprint, const std::string& settings);
  // A reload may change the number of rounds: it applies to the recording in
  // progress (complete at the next round end if enough rounds were seen).
  void set_rounds(int rounds) { rounds_ = rounds; }
  int rounds() const { return rounds_; }
  // The stored baseline, for the tracker to set facts, topology and changes.
  Baseline& mutable_baseline() { return baseline_; }

  // Feed successful medians of the current round; EndRound() closes it. After
  // `rounds` rounds the baseline is the per-pair median of what was fed.
  // Returns true when this call completed the baseline (time to persist it).
  void Add(const BaselineValue& value);
  bool EndRound(const std::string& now_rfc3339);

  bool complete() const { return baseline_.complete; }
  const Baseline& baseline() const { return baseline_; }

 private:
  int rounds_;
  int rounds_seen_ = 0;
  bool round_has_values_ = false;  // Add() since the last EndRound()
  Baseline baseline_;
  std::map<std::string, std::pair<BaselineValue, std::vector<double>>> pending_;  // key -> samples
};

}  // namespace numaprobe::daemon
