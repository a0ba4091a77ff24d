#include "daemon/budget.h"

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
  if (first_ns_ < 0) first_ns_ = start_ns;
  const std::int64_t pause_ns = PauseNs(cpu_seconds, ratio_);
  next_allowed_ns_ = std::max(next_allowed_ns_, start_ns) + pause_ns;
  charges_.emplace_back(end_ns, cpu_seconds);
  // Keep only what the trailing window can still see.
  while (!charges_.empty() && charges_.front().first < end_ns - window_ns_) charges_.pop_front();
}

double DutyBudget::ObservedRatio(std::int64_t now_ns) const {
  if (first_ns_ < 0) return 0;
  double spent = 0;
  for (const auto& [end_ns, cpu] : charges_) {
    if (end_ns >= now_ns - window_ns_) spent += cpu;
  }
  const std::int64_t span_ns = std::clamp<std::int64_t>(now_ns - first_ns_, 1'000'000'000, window_ns_);
  return spent / (static_cast<double>(span_ns) / 1e9);
}

}  // namespace numaprobe::daemon
