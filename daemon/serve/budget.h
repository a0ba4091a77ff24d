// SPDX-License-Identifier: Apache-2.0
// The duty-cycle budget: probes may spend at most `ratio` of one CPU, counted
// in CPU time (what a probe costs the host), not wall time.
//
// Pacing: after a probe that ended at e and cost c CPU-seconds, the next may
// start no earlier than e + c / ratio: every probe is followed by a pause that
// pays for it, however long it waited for the probe lock or for CPU before
// (a pause counted from the start would already be over when a delayed probe
// ends, and the next would follow at once). A probe is never cut short to fit.
//
// Guarantee, for probes started no earlier than next_allowed_ns(): over any
// window of W seconds (W = 600 for the 10-minute window that
// numaprobe_duty_cycle_ratio reports), the CPU of every probe whose run
// overlaps the window, counted in full, is at most
//     ratio * W + the cost of one probe,
// that one being the last probe to start in the window (the pause that pays
// for it falls after the window). The probe running when the window opens is
// paid for by its pause inside the window. The largest single probe is the
// first preparation of a latency buffer (allocate, fault in, verify placement,
// link the chase), so a window holding one (after start, a replan, or a
// buffer dropped from the pool) can exceed ratio * W by that much; later
// probes reuse the buffer and cost far less. One pause is at most a day
// (config.cc keeps the ratio at or above 0.00001, so only a probe costing
// over 0.86 CPU-seconds at that ratio reaches the cap); a capped pause is
// longer than any window, so the bound holds with it too.
//
// Thread safety: not thread-safe; owned by the scheduler thread.
#pragma once

#include <cstdint>
#include <deque>

namespace numaprobe::daemon {

class DutyBudget {
 public:
  // `window_ns` is the trailing window ObservedRatio reports over.
  explicit DutyBudget(double ratio, std::int64_t window_ns = 600'000'000'000);

  void set_ratio(double ratio) { ratio_ = ratio; }
  double ratio() const { return ratio_; }

  // Records a probe that ran from `start_ns` to `end_ns` (monotonic) and cost
  // `cpu_seconds`; the next probe may start `cpu_seconds / ratio` after
  // `end_ns` (or after the previous pause, if that ends later).
  void Charge(std::int64_t start_ns, std::int64_t end_ns, double cpu_seconds);
  // Earliest monotonic time the next probe may start.
  std::int64_t next_allowed_ns() const { return next_allowed_ns_; }
  // CPU seconds spent in [now - window, now], divided by the whole window
  // (also while the daemon is younger than the window: the ratio then starts
  // low rather than inflated by a short divisor). Each probe's cost is spread
  // evenly over its run, so a probe straddling the window's start counts pro
  // rata.
  double ObservedRatio(std::int64_t now_ns) const;

 private:
  struct Charged {
    std::int64_t start_ns;
    std::int64_t end_ns;
    double cpu_seconds;
  };
  double ratio_;
  std::int64_t window_ns_;
  std::int64_t next_allowed_ns_ = 0;
  std::deque<Charged> charges_;  // in the order charged (oldest first)
};

}  // namespace numaprobe::daemon
