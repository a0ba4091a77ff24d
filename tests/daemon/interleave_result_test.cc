// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/probing/kinds/interleave_result.cc: when the
// interleave kind is not planned, the weights it allocates with, and the
// peak figure it is judged against.
#include "daemon/probing/kinds/interleave_result.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using ::testing::HasSubstr;
using ::testing::Optional;

TEST(InterleaveResultTest, OneMemoryNodeHasNothingToInterleave) {
  const WeightedInterleave current{true, {{0, 1}}};
  EXPECT_THAT(NotPlannedReason({0}, current, ""), Optional(HasSubstr("a one-node host has nothing to interleave")));
  EXPECT_THAT(NotPlannedReason({}, current, ""), Optional(HasSubstr("0 memory nodes")));
}

TEST(InterleaveResultTest, AKernelWithoutThePolicyIsNamed) {
  EXPECT_THAT(NotPlannedReason({0, 1}, std::nullopt, ""),
              Optional(HasSubstr("no /sys/kernel/mm/mempolicy/weighted_interleave")));
  EXPECT_THAT(NotPlannedReason({0, 1}, WeightedInterleave{std::nullopt, {{0, 1}, {1, 1}}},
                               "mbind(MPOL_WEIGHTED_INTERLEAVE): Invalid argument"),
              Optional(
                  HasSubstr("refuses weighted interleave (Linux 6.9+): mbind(MPOL_WEIGHTED_INTERLEAVE): Invalid")));
  EXPECT_EQ(NotPlannedReason({0, 1}, WeightedInterleave{false, {{0, 3}, {1, 1}}}, ""), std::nullopt);
}

TEST(InterleaveResultTest, WeightsAreTheKernelsForEveryMemoryNode) {
  const WeightedInterleave current{false, {{0, 3}, {1, 1}, {2, 5}}};
  const InterleaveWeightsNow both = WeightsOf({0, 1}, current);
  EXPECT_EQ(both.problem, "");
  EXPECT_EQ(both.weights, (std::map<int, int>{{0, 3}, {1, 1}}));
  const InterleaveWeightsNow missing = WeightsOf({0, 3}, current);
  EXPECT_TRUE(missing.weights.empty());
  EXPECT_THAT(missing.problem, HasSubstr("no readable weight for node 3"));
  EXPECT_THAT(WeightsOf({0, 1}, std::nullopt).problem, HasSubstr("weighted_interleave"));
}

// The best read peak of the CPU node, not its write figure, not another CPU
// node's, not a failed run's.
TEST(InterleaveResultTest, TheBestNodeIsTheHighestReadPeakFromTheCpuNode) {
  PeakResult failed;
  failed.op = k::BandwidthOp::kRead;
  failed.outcome = k::Outcome::kDisturbed;
  failed.bytes_per_second.median = 9e11;
  const std::vector<RecordPtr> records{MakePeakFigure(0, 0, k::BandwidthOp::kRead, 9e10),
                                       MakePeakFigure(0, 1, k::BandwidthOp::kRead, 4e10),
                                       MakePeakFigure(0, 1, k::BandwidthOp::kWrite, 2e11),
                                       MakePeakFigure(1, 1, k::BandwidthOp::kRead, 1e11), MakePeak({0, 0, 1}, failed)};
  const std::optional<BestNodePeak> best = BestNodePeakOf(records, 0);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->mem_node, 0);
  EXPECT_DOUBLE_EQ(best->bytes_per_second, 9e10);
  EXPECT_EQ(BestNodePeakOf(records, 2), std::nullopt);
}

TEST(InterleaveResultTest, GainIsTheFigureOverTheBestNode) {
  InterleaveResult r;
  r.bytes_per_second.median = 1.2e11;
  EXPECT_EQ(GainOf(r), std::nullopt);
  r.best_node = BestNodePeak{0, 1e11};
  EXPECT_THAT(GainOf(r), Optional(::testing::DoubleEq(1.2)));
}

}  // namespace
}  // namespace numaprobe::daemon
