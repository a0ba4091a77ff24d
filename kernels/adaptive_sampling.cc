// SPDX-License-Identifier: Apache-2.0
#include "kernels/adaptive_sampling.h"

#include <algorithm>

namespace numaprobe::kernels {
namespace {

// 1/8 of the default 40'000 loads is 5'000 loads (about 0.6 ms at DRAM
// latency): still thousands of times the step of a host's clock.
constexpr std::uint64_t kMaxShortening = 8;

// Units a sample needs to last `min_ns`, given that `units` lasted `ns`:
// scaled up in proportion, at least doubled (a sample of 0 ns says nothing
// about the rate), rounded up.
std::uint64_t UnitsLasting(std::int64_t min_ns, std::uint64_t units, std::int64_t ns) {
  if (ns <= 0) return 2 * units;
  const double scaled = static_cast<double>(units) * static_cast<double>(min_ns) / static_cast<double>(ns);
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(scaled) + 1, units + 1);
}

}  // namespace

SamplingResult SampleAdaptively(const SamplingSpec& spec, TimerCheck& timer,
                                const std::function<std::optional<std::int64_t>(std::uint64_t)>& sample,
                                const std::function<std::int64_t()>& now_ns) {
  SamplingResult result;
  if (spec.samples <= 0 || spec.units_per_sample == 0) return result;
  const int max_attempts = spec.max_attempts > 0 ? spec.max_attempts : 3 * spec.samples;
  const std::uint64_t cap = static_cast<std::uint64_t>(max_attempts) * spec.units_per_sample;
  std::uint64_t floor = std::max<std::uint64_t>(spec.units_per_sample / kMaxShortening, 1);
  const std::int64_t deadline = now_ns() + spec.max_wall_ns;
  std::uint64_t units = spec.units_per_sample;
  std::uint64_t spent = 0;
  result.shortest_units = units;
  result.longest_units = units;
  result.per_unit.reserve(static_cast<std::size_t>(spec.samples));
  bool last_too_short = false;
  while (static_cast<int>(result.per_unit.size()) < spec.samples && spent + units <= cap) {
    if (now_ns() >= deadline) {
      result.deadline_passed = true;
      break;
    }
    if (spec.stop != nullptr && spec.stop->load(std::memory_order_relaxed)) {
      result.cancelled = true;
      break;
    }
    const std::optional<std::int64_t> ns = sample(units);
    spent += units;
    ++result.attempts;
    result.shortest_units = std::min(result.shortest_units, units);
    result.longest_units = std::max(result.longest_units, units);
    last_too_short = ns && !timer.Resolves(*ns);
    if (!ns) {
      ++result.disturbed;
      units = std::max(units / 2, floor);
    } else if (last_too_short) {
      ++result.too_short;
      result.too_short_ns = *ns;
      floor = std::max(floor, UnitsLasting(timer.min_sample_ns(), units, *ns));
      units = floor;
      result.needed_units = units;
    } else {
      timer.Accept(*ns);
      result.per_unit.push_back(static_cast<double>(*ns) * 1e-9 / static_cast<double>(units));
    }
  }
  const bool short_of_samples = static_cast<int>(result.per_unit.size()) < spec.samples && !result.cancelled;
  // A run that was never disturbed and lengthened its samples for the clock
  // ended short because of the clock, even when its last sample resolved: the
  // lengthened samples spent the cap.
  result.clock_limited = short_of_samples && (last_too_short || (result.too_short > 0 && result.disturbed == 0));
  return result;
}

}  // namespace numaprobe::kernels
