// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/budget.h"

#include <algorithm>

namespace numaprobe::daemon {

DutyBudget::DutyBudget(double ratio, std::int64_t window_ns) : ratio_(ratio), window_ns_(window_ns) {}

namespace {

// Longer pauses saturate here. A tiny ratio (or a huge cost) would otherwise
// overflow the conversion to int64_t, which is undefined behaviour and on x86
// yields INT64_MIN: pacing silently off.
constexpr std::int64_t kMaxPauseNs = 86'400'000'000'000;  // one day

std::int64_t PauseNs(double cpu_seconds, double ratio) {
  const double pause_ns = cpu_seconds / ratio * 1e9;
  if (!(pause_ns < static_cast<double>(kMaxPauseNs))) return kMaxPauseNs;  // also inf and NaN
  return pause_ns > 0 ? static_cast<std::int64_t>(pause_ns) : 0;
}

}  // namespace

void DutyBudget::Charge(std::int64_t start_ns, std::int64_t end_ns, double cpu_seconds) {
  end_ns = std::max(end_ns, start_ns);
  // From the end: a probe delayed by a lock wait or CPU starvation may spend
  // its CPU just before it ends, and its pause must still follow that. A probe
  // started before the previous pause was over (not done by the scheduler)
  // adds its pause to that one.
  next_allowed_ns_ = std::max(next_allowed_ns_, end_ns) + PauseNs(cpu_seconds, ratio_);
  charges_.push_back({start_ns, end_ns, cpu_seconds});
  // Keep only what a window ending at this start or later can still see.
  while (!charges_.empty() && charges_.front().end_ns < start_ns - window_ns_) charges_.pop_front();
}

double DutyBudget::ObservedRatio(std::int64_t now_ns) const {
  const std::int64_t from_ns = now_ns - window_ns_;
  double spent = 0;
  for (const Charged& c : charges_) {
    const std::int64_t lo = std::max(c.start_ns, from_ns);
    const std::int64_t hi = std::min(c.end_ns, now_ns);
    if (hi < lo) continue;
    if (c.end_ns == c.start_ns) {
      spent += c.cpu_seconds;  // an instant inside the window
    } else {
      spent += c.cpu_seconds * static_cast<double>(hi - lo) / static_cast<double>(c.end_ns - c.start_ns);
    }
  }
  return spent / (static_cast<double>(window_ns_) / 1e9);
}

}  // namespace numaprobe::daemon
