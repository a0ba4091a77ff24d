// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/adaptive_sampling.cc with a scripted sampler: which
// samples are "preempted", what the clock says and how coarse it is are chosen
// by the test, so the CPU cap, the shortening, the lengthening for a coarse
// clock and the deadline are checked exactly.
#include "kernels/adaptive_sampling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

namespace numaprobe::kernels {
namespace {

using ::testing::ElementsAre;

// A sampler that takes 1 ns per unit and is preempted whenever a sample is
// longer than `fits` units (a disturbance every `fits` units of work).
struct Preempted {
  std::uint64_t fits;
  std::vector<std::uint64_t> tried;
  std::optional<std::int64_t> operator()(std::uint64_t units) {
    tried.push_back(units);
    if (units > fits) return std::nullopt;
    return static_cast<std::int64_t>(units);
  }
};

std::int64_t Never() { return 0; }  // a clock that never reaches the deadline

// A clock that steps 1 ns: every sample of the tests above resolves.
TimerCheck FineClock() { return TimerCheck(1); }

std::uint64_t Spent(const Preempted& sampler) {
  std::uint64_t spent = 0;
  for (std::uint64_t units : sampler.tried) spent += units;
  return spent;
}

TEST(AdaptiveSamplingTest, UndisturbedRunTakesExactlyItsSamples) {
  TimerCheck fine = FineClock();
  Preempted sampler{UINT64_MAX, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, fine, std::ref(sampler), Never);
  EXPECT_EQ(r.per_unit.size(), 7u);
  EXPECT_EQ(r.attempts, 7);
  EXPECT_EQ(r.shortest_units, 40'000u);
  for (double s : r.per_unit) EXPECT_DOUBLE_EQ(s, 1e-9);
}

TEST(AdaptiveSamplingTest, PreemptedSamplesAreDiscardedAndTheNextOnesShorter) {
  // Interrupted every 12'000 units: 40'000 and 20'000 do not fit, 10'000 does.
  TimerCheck fine = FineClock();
  Preempted sampler{12'000, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, fine, std::ref(sampler), Never);
  ASSERT_EQ(r.per_unit.size(), 7u) << "a short preemption voided the estimate";
  EXPECT_EQ(r.attempts, 9);
  EXPECT_EQ(r.shortest_units, 10'000u);
  EXPECT_THAT(std::vector<std::uint64_t>(sampler.tried.begin(), sampler.tried.begin() + 3),
              ElementsAre(40'000u, 20'000u, 10'000u));
  for (double s : r.per_unit) EXPECT_DOUBLE_EQ(s, 1e-9) << "per-unit figures depend on the sample length";
}

TEST(AdaptiveSamplingTest, CpuCapEndsAHopelessRun) {
  // Nothing fits: 40k, 20k, 10k, then 5k (1/8) until 3 * 7 * 40k units are spent.
  TimerCheck fine = FineClock();
  Preempted sampler{0, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, fine, std::ref(sampler), Never);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_EQ(r.shortest_units, 5'000u);
  const std::uint64_t spent = Spent(sampler);
  EXPECT_LE(spent, 3u * 7u * 40'000u);
  EXPECT_GT(spent, 3u * 7u * 40'000u - 5'000u) << "gave up before spending the cap";
  EXPECT_EQ(r.attempts, 3 + (840'000 - 70'000) / 5'000);
}

TEST(AdaptiveSamplingTest, DeadlineEndsTheRunEvenWithinTheCap) {
  TimerCheck fine = FineClock();
  Preempted sampler{0, {}};
  std::int64_t now = 0;
  auto clock = [&] { return now += 100; };  // each look at the clock: +100 ns
  const SamplingResult r = SampleAdaptively({7, 40'000, 1000, 1'000, nullptr}, fine, std::ref(sampler), clock);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_LE(r.attempts, 10) << "ran past its deadline";
}

TEST(AdaptiveSamplingTest, StopCancels) {
  TimerCheck fine = FineClock();
  Preempted sampler{UINT64_MAX, {}};
  std::atomic<bool> stop{true};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, &stop}, fine, std::ref(sampler), Never);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.attempts, 0);
}

// A clock stepping 1 µs needs samples of 100 µs: the 40 µs nominal sample is
// discarded, and every later one lengthened to what the clock needs.
TEST(AdaptiveSamplingTest, CoarseClockLengthensSamplesWithinTheCap) {
  TimerCheck coarse(1'000);
  Preempted sampler{UINT64_MAX, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, coarse, std::ref(sampler), Never);
  ASSERT_EQ(r.per_unit.size(), 7u);
  EXPECT_EQ(r.too_short, 1);
  EXPECT_EQ(r.too_short_ns, 40'000);
  EXPECT_EQ(r.attempts, 8);
  EXPECT_THAT(std::vector<std::uint64_t>(sampler.tried.begin(), sampler.tried.begin() + 2),
              ElementsAre(40'000u, 100'001u));
  EXPECT_EQ(r.longest_units, 100'001u);
  EXPECT_FALSE(r.clock_limited);
  EXPECT_LE(Spent(sampler), 3u * 7u * 40'000u) << "lengthened past the CPU cap";
  for (double s : r.per_unit) EXPECT_DOUBLE_EQ(s, 1e-9);
  EXPECT_FALSE(coarse.Verdict("cpu 0")) << "an accepted sample was too short for the clock";
  EXPECT_DOUBLE_EQ(coarse.report().shortest_sample_seconds, 100'001e-9);
}

TEST(AdaptiveSamplingTest, PreemptionNeverShortensBelowWhatTheClockNeeds) {
  // Interrupted every 150'000 units: lengthened to 100'001 after the first
  // sample, and never halved below that although 40'000 / 8 would be allowed.
  TimerCheck coarse(1'000);
  Preempted sampler{150'000, {}};
  std::uint64_t calls = 0;
  auto flaky = [&](std::uint64_t units) -> std::optional<std::int64_t> {
    if (++calls % 3 == 0) return std::nullopt;  // every third sample preempted
    return sampler(units);
  };
  const SamplingResult r = SampleAdaptively({5, 40'000, 30, 1'000, nullptr}, coarse, flaky, Never);
  EXPECT_EQ(r.per_unit.size(), 5u);
  for (std::size_t i = 1; i < sampler.tried.size(); ++i) EXPECT_GE(sampler.tried[i], 100'001u) << "sample " << i;
  EXPECT_FALSE(coarse.Verdict("cpu 0"));
}

TEST(AdaptiveSamplingTest, ClockTooCoarseForTheCapEndsShortOfSamples) {
  // A 10 µs step needs 1 ms samples: 1'000'001 units, more than the whole cap
  // (3 x 7 x 40'000): one short sample is all the run can afford.
  TimerCheck coarse(10'000);
  Preempted sampler{UINT64_MAX, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, coarse, std::ref(sampler), Never);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_EQ(r.too_short, 1);
  EXPECT_EQ(r.needed_units, 1'000'001u);
  EXPECT_TRUE(r.clock_limited);
  EXPECT_EQ(sampler.tried, std::vector<std::uint64_t>{40'000u});
}

TEST(AdaptiveSamplingTest, ARunLengthenedThenDisturbedIsNotBlamedOnTheClock) {
  TimerCheck coarse(1'000);
  Preempted sampler{40'000, {}};  // the lengthened samples are all preempted
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, coarse, std::ref(sampler), Never);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_EQ(r.too_short, 1);
  EXPECT_FALSE(r.clock_limited) << "the last sample was disturbed, not too short";
}

// Seen in a TCG guest, whose clock reads vary: the second sample came out
// too short, the lengthened ones resolved, and they spent the cap before the
// run had its samples. Nothing disturbed it: the clock ended it.
TEST(AdaptiveSamplingTest, LengthenedSamplesThatSpendTheCapAreBlamedOnTheClock) {
  TimerCheck coarse(1'000);  // samples must last 100 µs: 100'000 units at 1 ns a unit
  std::vector<std::uint64_t> tried;
  auto varying = [&](std::uint64_t units) -> std::optional<std::int64_t> {
    tried.push_back(units);
    // The first sample runs slow enough to resolve, the second fast; the rest at 1 ns a unit.
    return static_cast<std::int64_t>(tried.size() == 1 ? 3 * units : units);
  };
  // Cap: 5 x 40'000 = 200'000 units: 40'000 + 40'000, then one of 100'001.
  const SamplingResult r = SampleAdaptively({3, 40'000, 5, 1'000'000, nullptr}, coarse, varying, Never);
  EXPECT_EQ(tried, (std::vector<std::uint64_t>{40'000u, 40'000u, 100'001u}));
  EXPECT_EQ(r.per_unit.size(), 2u);
  EXPECT_EQ(r.too_short, 1);
  EXPECT_EQ(r.disturbed, 0);
  EXPECT_FALSE(r.deadline_passed);
  EXPECT_TRUE(r.clock_limited) << "the clock's lengthening spent the cap, yet the run is not blamed on it";
}

TEST(AdaptiveSamplingTest, ADeadlinePassedIsSaid) {
  TimerCheck fine = FineClock();
  Preempted sampler{UINT64_MAX, {}};
  std::int64_t now = 0;
  auto clock = [&] { return now += 400; };  // the deadline (1'000 ns) passes after two samples
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, fine, std::ref(sampler), clock);
  EXPECT_EQ(r.per_unit.size(), 2u);
  EXPECT_TRUE(r.deadline_passed);
  EXPECT_EQ(r.disturbed, 0);
  EXPECT_FALSE(r.clock_limited);
}

TEST(AdaptiveSamplingTest, AStoppedClockNeverAcceptsASample) {
  TimerCheck stopped(0);
  Preempted sampler{UINT64_MAX, {}};
  auto zero = [&](std::uint64_t units) -> std::optional<std::int64_t> {
    sampler(units);
    return 0;
  };
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, stopped, zero, Never);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_GT(r.too_short, 0);
  EXPECT_TRUE(r.clock_limited);
  EXPECT_LE(Spent(sampler), 3u * 7u * 40'000u);
}

}  // namespace
}  // namespace numaprobe::kernels
