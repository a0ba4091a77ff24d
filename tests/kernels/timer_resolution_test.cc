// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/timer_resolution.cc: the clock's step is measured
// from scripted clocks (a coarse counter, a clock whose reads cost more than
// its tick, a stopped one), and the check is driven with chosen steps, so the
// logic is proven without a coarse machine.
#include "kernels/timer_resolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kernels/clock.h"

namespace numaprobe::kernels {
namespace {

using ::testing::HasSubstr;

// A counter of `tick_ns` read every `read_ns`: what arm64's CNTVCT_EL0 at
// 1 MHz (tick 1000) or an emulated HPET (tick 10, read ~1000) looks like.
struct ScriptedClock {
  std::int64_t tick_ns;
  std::int64_t read_ns;
  std::int64_t now = 0;
  std::int64_t operator()() {
    now += read_ns;
    return now / tick_ns * tick_ns;
  }
};

TEST(TimerResolutionTest, StepOfACoarseCounterIsItsTick) {
  ScriptedClock mhz{1'000, 25};  // 1 MHz counter, 25 ns reads
  EXPECT_EQ(MeasureClockStepNs(std::ref(mhz)), 1'000);
}

TEST(TimerResolutionTest, StepOfAClockSlowerToReadThanItTicksIsTheReadTime) {
  ScriptedClock hpet{10, 1'060};  // 100 MHz counter behind a 1.06 µs emulated read
  EXPECT_EQ(MeasureClockStepNs(std::ref(hpet)), 1'060);
}

TEST(TimerResolutionTest, StepIsTheSmallestOfSeveralChangesAndIgnoresGoingBack) {
  // A preempted read makes one step look long, a clock set back makes one
  // negative: neither is the clock's step.
  std::vector<std::int64_t> reads{0, 5'000, 5'000, 3'000, 3'000, 3'400, 9'000, 9'400, 9'800};
  std::size_t i = 0;
  auto clock = [&] { return reads[std::min(i++, reads.size() - 1)]; };
  EXPECT_EQ(MeasureClockStepNs(clock, 6), 400);
}

TEST(TimerResolutionTest, StoppedClockHasNoStep) {
  auto stopped = [] { return std::int64_t{42}; };
  EXPECT_EQ(MeasureClockStepNs(stopped, 16, 1'000), 0);
  EXPECT_FALSE(TimerCheck(0).Resolves(1'000'000'000));
}

TEST(TimerResolutionTest, TheProbesClockHasAStep) {
  // This host's CLOCK_MONOTONIC: finer than a microsecond on any x86 clocksource here.
  const std::int64_t step = MeasureClockStepNs(MonotonicNs);
  EXPECT_GT(step, 0);
  EXPECT_GT(TimerCheck::Start(0).step_ns(), 0);
  EXPECT_EQ(TimerCheck::Start(5'000).step_ns(), 5'000) << "a scripted step is used as given";
}

TEST(TimerResolutionTest, ASampleMustSpanAHundredSteps) {
  const TimerCheck check(1'000);
  EXPECT_EQ(check.min_sample_ns(), 100'000);
  EXPECT_FALSE(check.Resolves(99'999));
  EXPECT_TRUE(check.Resolves(100'000));
}

TEST(TimerResolutionTest, VerdictNamesStepAndSampleOfTheShortestAcceptedSample) {
  TimerCheck check(1'000);  // 1 µs steps
  check.Accept(500'000);
  check.Accept(40'000);  // 40 µs: 40 steps
  check.Accept(200'000);
  const std::optional<Failure> verdict = check.Verdict("cpu 3");
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->outcome, Outcome::kCoarseClock);
  EXPECT_THAT(verdict->reason, HasSubstr("cpu 3: a sample of 40.000 µs spans 40 steps"));
  EXPECT_THAT(verdict->reason, HasSubstr("step 1.000 µs"));
  EXPECT_THAT(verdict->reason, HasSubstr("fewer than the 100"));
  const ClockReport report = check.report();
  EXPECT_DOUBLE_EQ(report.resolution_seconds, 1e-6);
  EXPECT_DOUBLE_EQ(report.shortest_sample_seconds, 40e-6);
  EXPECT_EQ(report.min_steps_per_sample, 100);
}

TEST(TimerResolutionTest, ResolvedSamplesOrNoneGiveNoVerdict) {
  TimerCheck check(20);
  EXPECT_FALSE(check.Verdict("cpu 0")) << "no sample taken: nothing to judge";
  EXPECT_DOUBLE_EQ(check.report().shortest_sample_seconds, 0);
  check.Accept(2'000);
  check.Accept(5'000'000);
  EXPECT_FALSE(check.Verdict("cpu 0"));
  EXPECT_DOUBLE_EQ(check.report().shortest_sample_seconds, 2e-6);
}

TEST(TimerResolutionTest, CoarseClockIsAnOutcomeOfItsOwn) {
  EXPECT_EQ(OutcomeName(Outcome::kCoarseClock), "coarse_clock");
  EXPECT_EQ(std::count(std::begin(kAllOutcomes), std::end(kAllOutcomes), Outcome::kCoarseClock), 1);
}

}  // namespace
}  // namespace numaprobe::kernels
