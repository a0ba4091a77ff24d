// The per-pair baseline that drift is measured against: the median of the
// first `rounds` complete rounds after first start (or after `numaprobe
// baseline reset`, or after the host fingerprint changed).
//
// Thread safety: not thread-safe; owned by the scheduler thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

struct Baseline {
  std::string fingerprint;
  // The measurement settings the values were taken with (MeasurementSettings):
  // a figure measured differently is not comparable to them.
  std::string settings;
  std::string created;  // RFC 3339 UTC, when recording completed
  std::vector<BaselineValue> values;
  bool complete = false;
};

class BaselineRecorder {
 public:
  explicit BaselineRecorder(int rounds) : rounds_(rounds) {}

  // Adopts a complete baseline loaded from the state file.
  void Restore(Baseline baseline);
  // Forgets everything and records anew for `fingerprint` and `settings`.
  void Reset(const std::string& fingerprint, const std::string& settings);

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
