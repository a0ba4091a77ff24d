// SPDX-License-Identifier: Apache-2.0
// Unit tests for interleave weights from measured bandwidth
// (daemon/output/interleave_weights.h): the kernel's reduction worked by hand
// from mm/mempolicy.c (Linux 6.16 reduce_interleave_weights), the bandwidth an
// interleaved stream gets, the three vectors per CPU node from peak records,
// the HMAT fixture (a CPU-less node without CPU-class figures) and the
// terminal section, including a one-node host.
#include "daemon/output/interleave_weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "daemon/common/hmat.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

using ::testing::AllOf;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

constexpr double kMiB = 1024.0 * 1024.0;

RecordPtr Peak(int cpu_node, int mem_node, kernels::BandwidthOp op, double mib_per_second) {
  return MakePeakFigure(cpu_node, mem_node, op, mib_per_second * kMiB);
}

// Read and write from cpu_node to mem_node.
void AddPair(std::vector<RecordPtr>& records, int cpu_node, int mem_node, double read_mib, double write_mib) {
  records.push_back(Peak(cpu_node, mem_node, kernels::BandwidthOp::kRead, read_mib));
  records.push_back(Peak(cpu_node, mem_node, kernels::BandwidthOp::kWrite, write_mib));
}

TEST(KernelWeightReductionTest, EqualNodesInterleavePlainly) {
  // 32 * 1000 / 2000 = 16 each; divided by their GCD 16.
  EXPECT_THAT(KernelWeightReduction({{0, 1000}, {1, 1000}}), ElementsAre(Pair(0, 1), Pair(1, 1)));
}

TEST(KernelWeightReductionTest, SharesOfThirtyTwoRoundedDown) {
  // 64000 / 3000 = 21, 32000 / 3000 = 10: GCD 1, so 21:10, not 2:1.
  EXPECT_THAT(KernelWeightReduction({{0, 2000}, {1, 1000}}), ElementsAre(Pair(0, 21), Pair(1, 10)));
  // 96000 / 7500 = 12, 12, 48000 / 7500 = 6: GCD 6.
  EXPECT_THAT(KernelWeightReduction({{0, 3000}, {1, 3000}, {2, 1500}}),
              ElementsAre(Pair(0, 2), Pair(1, 2), Pair(2, 1)));
}

TEST(KernelWeightReductionTest, ASmallOrMissingFigureGetsOne) {
  // 32 * 10 = 320 is under the total 1010: the floor of 1.
  EXPECT_THAT(KernelWeightReduction({{0, 1000}, {1, 10}}), ElementsAre(Pair(0, 31), Pair(1, 1)));
  // Exactly 1/32 of the total is not over it: 1 as well.
  EXPECT_THAT(KernelWeightReduction({{0, 31}, {1, 1}}), ElementsAre(Pair(0, 31), Pair(1, 1)));
  // A node without figures (0) gets 1; the other 32 * 1000 / 1000.
  EXPECT_THAT(KernelWeightReduction({{0, 1000}, {1, 0}}), ElementsAre(Pair(0, 32), Pair(1, 1)));
  EXPECT_THAT(KernelWeightReduction({{0, 0}, {1, 0}}), ElementsAre(Pair(0, 1), Pair(1, 1)));
}

TEST(InterleavedBandwidthTest, TheNodeThatFillsFirstBoundsTheStream) {
  // 1:1 over 20 and 10: node 1 serves half and fills at 2 * 10.
  EXPECT_THAT(InterleavedBandwidth({{0, 1}, {1, 1}}, {{0, 20.0}, {1, 10.0}}), testing::Optional(20.0));
  // Weights in proportion to the bandwidths give their sum.
  EXPECT_THAT(InterleavedBandwidth({{0, 2}, {1, 1}}, {{0, 20.0}, {1, 10.0}}), testing::Optional(30.0));
  // A weighted node without a figure: no answer, not a guess.
  EXPECT_FALSE(InterleavedBandwidth({{0, 1}, {1, 1}}, {{0, 20.0}}));
}

// A two-socket host: nodes 0 and 1 with CPUs, 21 apart.
InterleaveHost TwoSockets(std::optional<WeightedInterleave> current) {
  return {{0, 1}, {0, 1}, {{{0, 1}, 21}, {{1, 0}, 21}}, {}, std::move(current)};
}

TEST(InterleaveWeightsTest, PerCpuNodeAndNearestVectorsOnASymmetricHost) {
  std::vector<RecordPtr> records;
  // Node 0's CPUs: local 2000/1800, remote 1000/900 MiB/s; min(read, write).
  AddPair(records, 0, 0, 2000, 1800);
  AddPair(records, 0, 1, 1000, 900);
  AddPair(records, 1, 1, 2000, 1800);
  WeightedInterleave current;
  current.auto_mode = true;
  current.weights = {{0, 1}, {1, 1}, {5, 9}};  // node 5 has no memory here: not shown
  const auto all = InterleaveWeightsOf(records, TwoSockets(current));
  ASSERT_EQ(all.size(), 2u);
  const InterleaveWeights& from0 = all[0];
  EXPECT_EQ(from0.cpu_node, 0);
  // Node 0's own figures: 32 * 1800 / 2700 = 21, 32 * 900 / 2700 = 10.
  EXPECT_THAT(from0.measured, ElementsAre(Pair(0, 21), Pair(1, 10)));
  // Each node from its own CPUs (its nearest): 1800 and 1800, as the kernel's
  // auto mode sees a symmetric host.
  EXPECT_THAT(from0.measured_nearest, ElementsAre(Pair(0, 1), Pair(1, 1)));
  EXPECT_THAT(from0.kernel, ElementsAre(Pair(0, 1), Pair(1, 1)));
  EXPECT_TRUE(from0.firmware.empty()) << "no HMAT";
  // The kernel's weights are what its rule gives the measured figures: no
  // loss to report, although node 0 alone would do better with 21:10.
  EXPECT_THAT(from0.kernel_over_nearest, testing::Optional(1.0));
  const InterleaveWeights& from1 = all[1];
  EXPECT_TRUE(from1.measured.empty()) << "node 0's memory is not measured from node 1: no guessed weight";
  // A memory node without a readable weight: the kernel's vector is unknown,
  // not the default 1, and there is no ratio to publish.
  WeightedInterleave unreadable;
  unreadable.weights = {{0, 2}};
  const auto partial = InterleaveWeightsOf(records, TwoSockets(unreadable));
  EXPECT_TRUE(partial[0].kernel.empty());
  EXPECT_FALSE(partial[0].kernel_over_nearest);
  EXPECT_FALSE(from1.kernel_over_nearest) << "node 1 has no figure of node 0 to judge a stream by";
  const nlohmann::json j = InterleaveToJson(all);
  EXPECT_EQ(j[0]["measured"], nlohmann::json({{"0", 21}, {"1", 10}}));
  EXPECT_EQ(j[0]["measured_nearest"], nlohmann::json({{"0", 1}, {"1", 1}}));
  EXPECT_TRUE(j[1]["kernel_over_nearest"].is_null());
}

TEST(InterleaveWeightsTest, NoNearestVectorUntilTheNearestCpuNodeMeasuredIt) {
  std::vector<RecordPtr> records;
  AddPair(records, 0, 0, 2000, 1800);
  AddPair(records, 0, 1, 1000, 900);
  // Node 1 has CPUs but has not measured its own memory yet: node 0's remote
  // figure is not node 1's.
  const auto all = InterleaveWeightsOf(records, TwoSockets(std::nullopt));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_THAT(all[0].measured, ElementsAre(Pair(0, 21), Pair(1, 10)));
  EXPECT_TRUE(all[0].measured_nearest.empty());
}

// A CXL expander (node 2, no CPUs, 14 from node 0) whose link trained at
// half its width: the firmware's (CDAT) figure says 60000 MiB/s, the link
// carries 30000. The kernel's auto weights from the firmware's figures
// overweight it.
TEST(InterleaveWeightsTest, TheKernelsLossWhereTheFirmwareFiguresAreWrong) {
  std::vector<RecordPtr> records;
  AddPair(records, 0, 0, 140000, 140000);
  AddPair(records, 0, 2, 30000, 30000);
  WeightedInterleave current;
  current.auto_mode = true;
  current.weights = KernelWeightReduction({{0, 140000}, {2, 60000}});
  ASSERT_THAT(current.weights, ElementsAre(Pair(0, 22), Pair(2, 9)));
  const InterleaveHost host{{0, 2}, {0}, {{{0, 2}, 14}}, {}, current};
  const auto all = InterleaveWeightsOf(records, host);
  ASSERT_EQ(all.size(), 1u);
  // 32 * 140000 / 170000 = 26, 32 * 30000 / 170000 = 5.
  EXPECT_THAT(all[0].measured_nearest, ElementsAre(Pair(0, 26), Pair(2, 5)));
  // 22:9 fills node 2 first: 30000 * 31 / 9; 26:5 fills node 0 first: 140000 * 31 / 26.
  ASSERT_TRUE(all[0].kernel_over_nearest);
  EXPECT_THAT(*all[0].kernel_over_nearest, DoubleNear((30000.0 * 31 / 9) / (140000.0 * 31 / 26), 1e-3));
  EXPECT_LT(*all[0].kernel_over_nearest, 0.9) << "what NumaProbeInterleaveWeightsCostBandwidth fires on";
}

TEST(InterleaveWeightsTest, FirmwareFiguresAsTheKernelTakesThem) {
  const std::string sys = (std::filesystem::path(NUMAPROBE_FIXTURES) / "host_facts/hmat/sys").string();
  std::vector<RecordPtr> records;
  AddPair(records, 0, 0, 2000, 2000);
  AddPair(records, 0, 1, 1000, 1000);
  AddPair(records, 0, 2, 500, 250);
  // Nodes 0 and 1: CPU class 23552 read, 20480 write MiB/s; node 2 (CPU-less,
  // like a CXL expander) only in class 0, so the kernel has no figure: 1. The
  // weighted_interleave fixture's `auto` weights are exactly these.
  const InterleaveHost host{
      {0, 1, 2}, {0, 1}, {{{0, 1}, 21}, {{1, 0}, 21}, {{0, 2}, 14}, {{1, 2}, 24}}, ReadHmat(sys), std::nullopt};
  const auto all = InterleaveWeightsOf(records, host);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_THAT(all[0].firmware, ElementsAre(Pair(0, 16), Pair(1, 16), Pair(2, 1)));
  EXPECT_TRUE(all[0].kernel.empty()) << "a kernel before 6.9";
  // Of 2000 + 1000 + 250: 64000 / 3250 = 19, 32000 / 3250 = 9, 8000 / 3250 = 2.
  EXPECT_THAT(all[0].measured, ElementsAre(Pair(0, 19), Pair(1, 9), Pair(2, 2)));
  EXPECT_TRUE(all[0].measured_nearest.empty()) << "node 1's CPUs have not measured node 1";
  EXPECT_FALSE(all[0].kernel_over_nearest);
}

TEST(InterleaveWeightsTest, OnlyPeakFiguresCountAndOneNodeHasNothingToInterleave) {
  std::vector<RecordPtr> records;
  kernels::BandwidthResult one_thread;
  one_thread.op = kernels::BandwidthOp::kRead;
  one_thread.bytes_per_second.median = 1000 * kMiB;
  records.push_back(MakeBandwidth({0, 0, 0}, one_thread));
  EXPECT_TRUE(InterleaveWeightsOf(records, TwoSockets(std::nullopt)).empty()) << "one thread is not a node's peak";
  EXPECT_TRUE(InterleaveSections(records, TwoSockets(std::nullopt)).empty());
  AddPair(records, 0, 0, 2000, 1800);
  const InterleaveHost one_node{{0}, {0}, {}, {}, std::nullopt};
  EXPECT_TRUE(InterleaveWeightsOf(records, one_node).empty());
  const auto sections = InterleaveSections(records, one_node);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_THAT(sections[0].notes, ElementsAre(HasSubstr("nothing to interleave")));
  EXPECT_TRUE(sections[0].cells.empty()) << "no figure for a one-node host";
}

TEST(InterleaveWeightsTest, TheSectionPrintsTheLinesThatWouldSetTheMeasuredNearestWeights) {
  std::vector<RecordPtr> records;
  AddPair(records, 0, 0, 2000, 1800);
  AddPair(records, 0, 1, 1000, 900);
  AddPair(records, 1, 1, 1000, 900);  // node 1's memory is slower
  WeightedInterleave current;
  current.auto_mode = false;
  current.weights = {{0, 1}, {1, 1}};
  const auto sections = InterleaveSections(records, TwoSockets(current));
  ASSERT_EQ(sections.size(), 1u);
  const ReportSection& s = sections[0];
  EXPECT_THAT(s.row_labels, ElementsAre("node 0 measured", "node 0 measured nearest", "node 0 kernel (manual)",
                                        "node 1 measured", "node 1 measured nearest", "node 1 kernel (manual)"));
  // Node 0: 21:10 (its own, of best 1.00); nearest 1800 and 900: 21:10 too;
  // 1:1 fills node 1 at 2 * 900 against 1800 * 31 / 21.
  EXPECT_THAT(s.cells[0], ElementsAre("21", "10", "1.00"));
  EXPECT_THAT(s.cells[1], ElementsAre("21", "10", "1.00"));
  EXPECT_THAT(s.cells[2], ElementsAre("1", "1", "0.68"));
  EXPECT_THAT(s.cells[3], ElementsAre("-", "-", "-")) << "node 1 has not measured node 0";
  std::string notes;
  for (const std::string& n : s.notes) notes += n + '\n';
  EXPECT_THAT(notes, AllOf(HasSubstr("echo 21 > /sys/kernel/mm/mempolicy/weighted_interleave/node0; "
                                     "echo 10 > /sys/kernel/mm/mempolicy/weighted_interleave/node1\n"),
                           HasSubstr("numactl --weighted-interleave=all"), Not(HasSubstr("no weighted interleave"))));
  const auto without = InterleaveSections(records, TwoSockets(std::nullopt));
  std::string old_kernel;
  for (const std::string& n : without[0].notes) old_kernel += n + '\n';
  EXPECT_THAT(old_kernel, AllOf(HasSubstr("no weighted interleave"), Not(HasSubstr("echo "))));
}

}  // namespace
}  // namespace numaprobe::daemon
