// SPDX-License-Identifier: Apache-2.0
#include "kernels/timer_resolution.h"

#include <algorithm>
#include <limits>

#include "kernels/clock.h"

namespace numaprobe::kernels {
namespace {

std::string Micros(std::int64_t ns) {
  // Three decimals: a 20 ns step reads 0.020 µs, not 0.
  const std::int64_t whole = ns / 1000;
  const std::int64_t frac = ns % 1000;
  std::string f = std::to_string(frac);
  return std::to_string(whole) + "." + std::string(3 - f.size(), '0') + f + " µs";
}

}  // namespace

std::int64_t MeasureClockStepNs(const std::function<std::int64_t()>& now_ns, int changes, std::int64_t max_reads) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::int64_t previous = now_ns();
  for (int c = 0; c < changes; ++c) {
    std::int64_t next = previous;
    for (std::int64_t reads = 0; next == previous; ++reads) {
      if (reads == max_reads) return 0;
      next = now_ns();
    }
    // A clock that went backwards is not a step; its next change is.
    if (next > previous) best = std::min(best, next - previous);
    previous = next;
  }
  return best == std::numeric_limits<std::int64_t>::max() ? 0 : best;
}

TimerCheck TimerCheck::Start(std::int64_t scripted_step_ns) {
  return TimerCheck(scripted_step_ns != 0 ? scripted_step_ns : MeasureClockStepNs(SampleClockNs));
}

void TimerCheck::Accept(std::int64_t sample_ns) {
  shortest_ns_ = shortest_ns_ < 0 ? sample_ns : std::min(shortest_ns_, sample_ns);
}

std::string TimerCheck::Describe(std::int64_t sample_ns) const {
  if (step_ns_ <= 0) return "the clock did not advance";
  return "a sample of " + Micros(sample_ns) + " spans " + std::to_string(sample_ns / step_ns_) +
         " steps of the clock (step " + Micros(step_ns_) + "), fewer than the " + std::to_string(kMinStepsPerSample) +
         " a 1% figure needs";
}

std::optional<Failure> TimerCheck::Verdict(const std::string& what) const {
  if (shortest_ns_ < 0 || Resolves(shortest_ns_)) return std::nullopt;
  return Failure{Outcome::kCoarseClock, what + ": " + Describe(shortest_ns_)};
}

ClockReport TimerCheck::report() const {
  return {static_cast<double>(step_ns_) * 1e-9, static_cast<double>(std::max<std::int64_t>(shortest_ns_, 0)) * 1e-9,
          kMinStepsPerSample};
}

}  // namespace numaprobe::kernels
