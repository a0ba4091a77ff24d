#include "daemon/budget.h"

#include <algorithm>

namespace numaprobe::daemon {

DutyBudget::DutyBudget(double ratio, std::int64_t window_ns) : ratio_(ratio), window_ns_(window_ns) {}

void DutyBudget::Charge(std::int64_t start_ns, std::int64_t end_ns, double cpu_seconds) {
  if (first_ns_ < 0) first_ns_ = start_ns;
  const auto pause_ns = static_cast<std::int64_t>(cpu_seconds / ratio_ * 1e9);
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
