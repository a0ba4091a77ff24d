// Unit tests for kernels/adaptive_sampling.cc with a scripted sampler: which
// samples are "preempted" and what the clock says are chosen by the test, so
// the CPU cap, the shortening and the deadline are checked exactly.
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
  std::optional<double> operator()(std::uint64_t units) {
    tried.push_back(units);
    if (units > fits) return std::nullopt;
    return static_cast<double>(units) * 1e-9;
  }
};

std::int64_t Never() { return 0; }  // a clock that never reaches the deadline

TEST(AdaptiveSamplingTest, UndisturbedRunTakesExactlyItsSamples) {
  Preempted sampler{UINT64_MAX, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, std::ref(sampler), Never);
  EXPECT_EQ(r.per_unit.size(), 7u);
  EXPECT_EQ(r.attempts, 7);
  EXPECT_EQ(r.shortest_units, 40'000u);
  for (double s : r.per_unit) EXPECT_DOUBLE_EQ(s, 1e-9);
}

TEST(AdaptiveSamplingTest, PreemptedSamplesAreDiscardedAndTheNextOnesShorter) {
  // Interrupted every 12'000 units: 40'000 and 20'000 do not fit, 10'000 does.
  Preempted sampler{12'000, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, std::ref(sampler), Never);
  ASSERT_EQ(r.per_unit.size(), 7u) << "a short preemption voided the estimate";
  EXPECT_EQ(r.attempts, 9);
  EXPECT_EQ(r.shortest_units, 10'000u);
  EXPECT_THAT(std::vector<std::uint64_t>(sampler.tried.begin(), sampler.tried.begin() + 3),
              ElementsAre(40'000u, 20'000u, 10'000u));
  for (double s : r.per_unit) EXPECT_DOUBLE_EQ(s, 1e-9) << "per-unit figures depend on the sample length";
}

TEST(AdaptiveSamplingTest, CpuCapEndsAHopelessRun) {
  // Nothing fits: 40k, 20k, 10k, then 5k (1/8) until 3 * 7 * 40k units are spent.
  Preempted sampler{0, {}};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, nullptr}, std::ref(sampler), Never);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_EQ(r.shortest_units, 5'000u);
  std::uint64_t spent = 0;
  for (std::uint64_t units : sampler.tried) spent += units;
  EXPECT_LE(spent, 3u * 7u * 40'000u);
  EXPECT_GT(spent, 3u * 7u * 40'000u - 5'000u) << "gave up before spending the cap";
  EXPECT_EQ(r.attempts, 3 + (840'000 - 70'000) / 5'000);
}

TEST(AdaptiveSamplingTest, DeadlineEndsTheRunEvenWithinTheCap) {
  Preempted sampler{0, {}};
  std::int64_t now = 0;
  auto clock = [&] { return now += 100; };  // each look at the clock: +100 ns
  const SamplingResult r = SampleAdaptively({7, 40'000, 1000, 1'000, nullptr}, std::ref(sampler), clock);
  EXPECT_TRUE(r.per_unit.empty());
  EXPECT_LE(r.attempts, 10) << "ran past its deadline";
}

TEST(AdaptiveSamplingTest, StopCancels) {
  Preempted sampler{UINT64_MAX, {}};
  std::atomic<bool> stop{true};
  const SamplingResult r = SampleAdaptively({7, 40'000, 0, 1'000, &stop}, std::ref(sampler), Never);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.attempts, 0);
}

}  // namespace
}  // namespace numaprobe::kernels
