// SPDX-License-Identifier: Apache-2.0
// How a run collects its samples on a CPU that something may preempt, timed by
// a clock of finite resolution.
//
// A sample interrupted by a context switch or a migration is discarded, never
// published. Discarding costs only that sample: the next one is half as long
// (down to 1/8 of the nominal length), so it is likelier to fit between two
// interruptions, and the run goes on until it has its samples, or until it
// has spent its CPU cap (max_attempts nominal samples' worth of work) or its
// wall-clock deadline.
//
// A clean sample too short for the clock to time to 1% (TimerCheck::Resolves)
// is discarded too, and the samples after it are lengthened to what the clock
// needs, never shortened below that again; within the same cap and deadline.
// When the cap cannot pay for samples that long, the run ends short of its
// samples with `clock_limited` set, and the caller reports kCoarseClock; so
// does a run whose clean samples, lengthened for the clock, spent the cap
// before there were enough of them. Per-unit
// figures (seconds per load) do not depend on the sample length once a sample
// is well above the clock's step.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kernels/timer_resolution.h"

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
  std::uint64_t longest_units = 0;   // the longest sample tried (> nominal after lengthening)
  int attempts = 0;                  // samples tried, accepted or not
  int too_short = 0;                 // clean samples discarded as too short for the clock
  std::int64_t too_short_ns = 0;     // how long the last of them lasted
  std::uint64_t needed_units = 0;    // the length the clock asked for after it
  int disturbed = 0;                 // samples discarded as disturbed
  // Short of samples because of the clock: the last sample tried was too
  // short, or, with none disturbed, the samples lengthened for it spent the
  // cap (or the deadline).
  bool clock_limited = false;
  bool deadline_passed = false;  // short of samples when the wall-clock deadline came
  bool cancelled = false;        // `stop` was raised
};

// `sample(units)` runs one sample of `units` and returns its duration in
// nanoseconds, or nullopt when it was disturbed. Accepted samples are recorded
// in `timer`. `now_ns` is a monotonic clock (injectable for tests).
SamplingResult SampleAdaptively(const SamplingSpec& spec, TimerCheck& timer,
                                const std::function<std::optional<std::int64_t>(std::uint64_t)>& sample,
                                const std::function<std::int64_t()>& now_ns);

}  // namespace numaprobe::kernels
