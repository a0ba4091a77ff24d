#include "kernels/adaptive_sampling.h"

#include <algorithm>

namespace numaprobe::kernels {
namespace {

// 1/8 of the default 40'000 loads is 5'000 loads (about 0.6 ms at DRAM
// latency): still thousands of times the clock's resolution.
constexpr std::uint64_t kMaxShortening = 8;

}  // namespace

SamplingResult SampleAdaptively(const SamplingSpec& spec,
                                const std::function<std::optional<double>(std::uint64_t)>& sample,
                                const std::function<std::int64_t()>& now_ns) {
  SamplingResult result;
  if (spec.samples <= 0 || spec.units_per_sample == 0) return result;
  const int max_attempts = spec.max_attempts > 0 ? spec.max_attempts : 3 * spec.samples;
  const std::uint64_t cap = static_cast<std::uint64_t>(max_attempts) * spec.units_per_sample;
  const std::uint64_t shortest = std::max<std::uint64_t>(spec.units_per_sample / kMaxShortening, 1);
  const std::int64_t deadline = now_ns() + spec.max_wall_ns;
  std::uint64_t units = spec.units_per_sample;
  std::uint64_t spent = 0;
  result.shortest_units = units;
  result.per_unit.reserve(static_cast<std::size_t>(spec.samples));
  while (static_cast<int>(result.per_unit.size()) < spec.samples && spent + units <= cap && now_ns() < deadline) {
    if (spec.stop != nullptr && spec.stop->load(std::memory_order_relaxed)) {
      result.cancelled = true;
      break;
    }
    const std::optional<double> seconds = sample(units);
    spent += units;
    ++result.attempts;
    if (seconds) {
      result.per_unit.push_back(*seconds / static_cast<double>(units));
    } else {
      units = std::max(units / 2, shortest);
      result.shortest_units = std::min(result.shortest_units, units);
    }
  }
  return result;
}

}  // namespace numaprobe::kernels
