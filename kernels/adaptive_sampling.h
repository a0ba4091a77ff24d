// How a run collects its samples on a CPU that something may preempt.
//
// A sample interrupted by a context switch or a migration is discarded, never
// published. Discarding costs only that sample: the next one is half as long
// (down to 1/8 of the nominal length), so it is likelier to fit between two
// interruptions, and the run goes on until it has its samples, or until it
// has spent its CPU cap (max_attempts nominal samples' worth of work) or its
// wall-clock deadline. Per-unit figures (seconds per load) do not depend on
// the sample length once a sample is well above the timer's resolution.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace numaprobe::kernels {

struct SamplingSpec {
  int samples = 7;                     // accepted samples wanted
  std::uint64_t units_per_sample = 0;  // nominal sample length (loads, round trips)
  int max_attempts = 0;                // CPU cap in nominal samples; 0: 3 * samples
  std::int64_t max_wall_ns = 2'000'000'000;
  const std::atomic<bool>* stop = nullptr;
};

struct SamplingResult {
  std::vector<double> per_unit;      // accepted samples, seconds per unit
  std::uint64_t shortest_units = 0;  // the shortest sample tried
  int attempts = 0;                  // samples tried, accepted or not
  bool cancelled = false;            // `stop` was raised
};

// `sample(units)` runs one sample of `units` and returns its duration in
// seconds, or nullopt when it was disturbed. `now_ns` is a monotonic clock
// (injectable for tests).
SamplingResult SampleAdaptively(const SamplingSpec& spec,
                                const std::function<std::optional<double>(std::uint64_t)>& sample,
                                const std::function<std::int64_t()>& now_ns);

}  // namespace numaprobe::kernels
