// SPDX-License-Identifier: Apache-2.0
// Whether the probes' clock can time a sample to the precision a figure states.
//
// A sample's duration is the difference of two clock reads, and each read is
// off by up to one step of the clock: its tick, or the time one read takes when
// that is longer (an emulated HPET read costs ~1 µs; arm64's CNTVCT_EL0 ticks
// at 1-50 MHz on many parts). A sample of N steps is therefore exact to about
// 1/N, and every probe figure states 1%: each accepted sample must span at
// least kMinStepsPerSample steps. Samples that do not are quantised (a spread
// of exactly zero, a figure that is one tick count divided by the unit count),
// and the run says so with Outcome::kCoarseClock instead of publishing them.
//
// The step is measured at the start of every run, on the clock the kernels
// use (kernels/clock.h): clock_getres() reports 1 ns for every high-resolution
// clocksource, whatever it really resolves. Nothing here depends on the
// architecture: a port that reads another counter in clock.h is checked the
// same way.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/result.h"

namespace numaprobe::kernels {

inline constexpr std::int64_t kMinStepsPerSample = 100;

// The smallest non-zero difference between successive reads of `now_ns`, over
// `changes` changes of its value (STREAM's checktick): preemption only makes a
// step look longer, so the minimum of a few is the clock's own. 0 when the
// clock did not change within `max_reads` reads in a row (a stopped clock).
std::int64_t MeasureClockStepNs(const std::function<std::int64_t()>& now_ns, int changes = 16,
                                std::int64_t max_reads = 1'000'000);

// Checks a run's accepted samples against the clock's step.
class TimerCheck {
 public:
  explicit TimerCheck(std::int64_t step_ns) : step_ns_(step_ns) {}
  // The check for one run: the step of SampleClockNs(), the clock every probe
  // times samples with, measured now; or `scripted_step_ns` when it is not 0
  // (a run spec's clock_step_ns, which tests set to stand for a coarse clock).
  static TimerCheck Start(std::int64_t scripted_step_ns);

  std::int64_t step_ns() const { return step_ns_; }
  // The shortest sample the clock resolves to the stated precision.
  std::int64_t min_sample_ns() const { return kMinStepsPerSample * step_ns_; }
  // Whether a sample lasting `sample_ns` spans enough steps. Never true on a
  // clock that did not advance (step 0).
  bool Resolves(std::int64_t sample_ns) const { return step_ns_ > 0 && sample_ns >= min_sample_ns(); }

  // Records an accepted sample (resolved or not); Verdict() judges them all.
  void Accept(std::int64_t sample_ns);
  // Nothing when every accepted sample was resolved (or none was taken); else
  // kCoarseClock, with `what` ("cpu 3", "delay 50 ns") and the numbers.
  std::optional<Failure> Verdict(const std::string& what) const;
  // Why a sample of `sample_ns` is not enough, for a failure's reason.
  std::string Describe(std::int64_t sample_ns) const;
  ClockReport report() const;

 private:
  std::int64_t step_ns_;
  std::int64_t shortest_ns_ = -1;  // shortest accepted sample; -1: none yet
};

}  // namespace numaprobe::kernels
