// The duty-cycle budget: probes may spend at most `ratio` of one CPU, counted
// in CPU time (what a probe costs the host), not wall time.
//
// Pacing: after a probe that started at t and cost c CPU-seconds, the next may
// start no earlier than t + c / ratio. Over any window W the probes then spend
// at most ratio * W plus one probe's cost, however long or short each probe
// is, and a probe is never cut short to fit. One pause is at most a day
// (config.cc keeps the ratio at or above 0.00001, so only a probe costing
// over 0.86 CPU-seconds at that ratio reaches the cap).
//
// Thread safety: not thread-safe; owned by the scheduler thread.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace numaprobe::daemon {

class DutyBudget {
 public:
  // `window_ns` is the trailing window ObservedRatio reports over.
  explicit DutyBudget(double ratio, std::int64_t window_ns = 600'000'000'000);

  void set_ratio(double ratio) { ratio_ = ratio; }

  // Records a probe that started at `start_ns` (monotonic) and cost `cpu_seconds`.
  void Charge(std::int64_t start_ns, std::int64_t end_ns, double cpu_seconds);
  // Earliest monotonic time the next probe may start.
  std::int64_t next_allowed_ns() const { return next_allowed_ns_; }
  // CPU seconds charged in the trailing window, divided by the window (or by the
  // time since the first charge while the daemon is younger than the window).
  double ObservedRatio(std::int64_t now_ns) const;

 private:
  double ratio_;
  std::int64_t window_ns_;
  std::int64_t first_ns_ = -1;
  std::int64_t next_allowed_ns_ = 0;
  std::deque<std::pair<std::int64_t, double>> charges_;  // (end_ns, cpu_seconds), oldest first
};

}  // namespace numaprobe::daemon
