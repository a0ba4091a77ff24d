// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/weighted_interleave.cc: the split check's arithmetic
// on units placed as the kernel places them, and a real allocation with the
// policy (a host with one memory node: every page on node 0).
#include "kernels/weighted_interleave.h"

#include <sched.h>

#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/arena.h"
#include "kernels/bandwidth.h"
#include "kernels/placement.h"
#include "tests/byte_sizes.h"
#include "tests/kernels/numa_syscalls.h"

namespace numaprobe::kernels {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr std::size_t kSplitPage = 4096;
constexpr std::size_t kSplitHuge = 2 * kMiB;
const std::map<int, int> kWeights321{{0, 3}, {1, 2}, {2, 1}};

// The node the kernel gives interleave index `ilx` (mm/mempolicy.c,
// weighted_interleave_nid): ilx % W, walked through the nodes in order.
int KernelNodeOf(std::size_t ilx, const std::map<int, int>& weights) {
  std::size_t total = 0;
  for (const auto& [node, weight] : weights) total += static_cast<std::size_t>(weight);
  std::size_t target = ilx % total;
  for (const auto& [node, weight] : weights) {
    if (target < static_cast<std::size_t>(weight)) return node;
    target -= static_cast<std::size_t>(weight);
  }
  return -1;
}

// `units` consecutive units starting at index `first` (anywhere in a cycle).
UnitRun KernelRun(std::size_t unit_bytes, std::size_t first, std::size_t units, const std::map<int, int>& weights) {
  UnitRun run{unit_bytes, {}};
  for (std::size_t i = first; i < first + units; ++i) ++run.units[KernelNodeOf(i, weights)];
  return run;
}

TEST(WeightedInterleaveTest, WholeCyclesOfThreeTwoOneMatch) {
  const PlacementReport r = CheckSplit({KernelRun(kSplitPage, 0, 600, kWeights321)}, kWeights321);
  EXPECT_TRUE(r.verified()) << r.split_mismatch;
  EXPECT_EQ(r.pages_checked, 600u);
  EXPECT_THAT(r.node_shares, UnorderedElementsAre(Pair(0, DoubleNear(0.5, 1e-9)), Pair(1, DoubleNear(2.0 / 6, 1e-9)),
                                                  Pair(2, DoubleNear(1.0 / 6, 1e-9))));
}

// 601..605 units end in a partial cycle; each start in the cycle gives a
// different node the extra units, and every one is within one cycle.
TEST(WeightedInterleaveTest, APartialLastCycleMatchesFromAnyStart) {
  for (std::size_t first = 0; first < 6; ++first) {
    for (std::size_t units = 601; units < 606; ++units) {
      const PlacementReport r = CheckSplit({KernelRun(kSplitPage, first, units, kWeights321)}, kWeights321);
      EXPECT_TRUE(r.verified()) << "start " << first << ", " << units << " units: " << r.split_mismatch;
    }
  }
}

// THP: the unit is a huge page, whose index counts huge pages, so the
// split is a count of huge pages; a buffer partly on base pages is two runs.
TEST(WeightedInterleaveTest, HugePageUnitsAndAMixedBufferMatch) {
  const PlacementReport thp = CheckSplit({KernelRun(kSplitHuge, 5, 128, kWeights321)}, kWeights321);
  EXPECT_TRUE(thp.verified()) << thp.split_mismatch;
  EXPECT_EQ(thp.pages_checked, 128u);
  const PlacementReport mixed =
      CheckSplit({KernelRun(kSplitHuge, 3, 100, kWeights321), KernelRun(kSplitPage, 51200, 700, kWeights321)},
                 kWeights321);
  EXPECT_TRUE(mixed.verified()) << mixed.split_mismatch;
  EXPECT_EQ(mixed.pages_checked, 800u);
}

TEST(WeightedInterleaveTest, AShareBeyondOneCycleFailsNamingTheNode) {
  UnitRun run = KernelRun(kSplitPage, 0, 600, kWeights321);
  // Seven units moved from node 0 to node 2: node 0 holds 293 of 600, where
  // its weight 3 of 6 gives exactly 300 (the run is whole cycles).
  run.units[2] += 7;
  run.units[0] -= 7;
  const PlacementReport r = CheckSplit({run}, kWeights321);
  EXPECT_FALSE(r.verified());
  EXPECT_GT(r.pages_misplaced, 0u);
  EXPECT_THAT(r.split_mismatch, HasSubstr("node 0 holds 293 of 600 4KiB units, its weight 3 of 6 gives 300"));
  EXPECT_EQ(PlacementFailure(r).outcome, Outcome::kPlacementMismatch);
  EXPECT_EQ(PlacementFailure(r).reason, r.split_mismatch);
}

TEST(WeightedInterleaveTest, UnitsOnANodeOutsideTheSetFail) {
  UnitRun run = KernelRun(kSplitPage, 0, 60, {{0, 1}, {1, 1}});
  run.units[3] = 1;
  const PlacementReport r = CheckSplit({run}, {{0, 1}, {1, 1}});
  EXPECT_FALSE(r.verified());
  EXPECT_THAT(r.split_mismatch, HasSubstr("units on node 3, which is not among the interleaved nodes"));
}

TEST(WeightedInterleaveTest, UnknownPagesAreUnverifiedNotAMismatch) {
  UnitRun run = KernelRun(kSplitPage, 0, 60, kWeights321);
  run.units[-1] = 2;
  const PlacementReport r = CheckSplit({run}, kWeights321);
  EXPECT_FALSE(r.verified());
  EXPECT_EQ(r.pages_unknown, 2u);
  EXPECT_EQ(PlacementFailure(r).outcome, Outcome::kPlacementUnverified);
}

// Four base pages per huge page here: a whole aligned group on one node is a
// huge unit; a group split between nodes, or the short tail, is base pages.
TEST(WeightedInterleaveTest, GroupUnitsFindsHugePagesAmongBasePages) {
  const std::vector<int> nodes{0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 2, 2, 2, 2, 1, 1};
  const std::vector<UnitRun> runs = GroupUnits(nodes, kSplitPage, 4);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].unit_bytes, 4 * kSplitPage);
  EXPECT_THAT(runs[0].units, UnorderedElementsAre(Pair(0, 1u), Pair(1, 1u)));
  EXPECT_EQ(runs[1].unit_bytes, kSplitPage);
  EXPECT_THAT(runs[1].units, UnorderedElementsAre(Pair(0, 2u), Pair(1, 2u)));
  EXPECT_EQ(runs[2].unit_bytes, 4 * kSplitPage);
  EXPECT_EQ(runs[3].unit_bytes, kSplitPage);
  EXPECT_THAT(runs[3].units, UnorderedElementsAre(Pair(1, 2u)));
  EXPECT_EQ(GroupUnits(nodes, kSplitPage, 1).size(), 1u);
}

// This host's kernel really allocates with the policy: on a host with one
// memory node every page lands on node 0, and the check says so.
TEST(WeightedInterleaveTest, RealAllocationOverNodeZeroVerifies) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  if (const std::string refusal = WeightedInterleaveRefusal({0}); !refusal.empty()) {
    GTEST_SKIP() << "this kernel has no weighted interleave (Linux 6.9+): " << refusal;
  }
  auto arena = Arena::Create({.bytes = 8 * kMiB, .node = -1, .weighted_interleave = {{0, 1}}});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  EXPECT_EQ(arena->node(), -1);
  const PlacementReport& p = arena->info().placement;
  EXPECT_TRUE(p.verified()) << p.split_mismatch << " " << p.method;
  EXPECT_THAT(p.node_shares, UnorderedElementsAre(Pair(0, DoubleNear(1.0, 1e-9))));
  // Independently of the check: move_pages puts every base page on node 0.
  std::string method;
  const std::vector<int> nodes = PageNodes(arena->data(), arena->bytes(), HostPageSizes()->base, method);
  ASSERT_EQ(nodes.size(), arena->bytes() / HostPageSizes()->base);
  for (std::size_t i = 0; i < nodes.size(); ++i) ASSERT_EQ(nodes[i], 0) << "page " << i << " (" << method << ")";
}

// The bandwidth kernel measures such a buffer like any other, and re-checks
// its split before it publishes a figure.
TEST(WeightedInterleaveTest, BandwidthOfAnInterleavedBufferIsMeasured) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  if (const std::string refusal = WeightedInterleaveRefusal({0}); !refusal.empty()) {
    GTEST_SKIP() << "this kernel has no weighted interleave (Linux 6.9+): " << refusal;
  }
  auto buffer = BandwidthBuffer::Create({.bytes = 32 * kMiB, .weighted_interleave = {{0, 1}}});
  ASSERT_TRUE(buffer.ok()) << buffer.failure().reason;
  BandwidthRunSpec spec;
  spec.cpus = {sched_getcpu()};
  spec.burst_bytes = 2 * kMiB;
  spec.warmup_bytes = 2 * kMiB;
  spec.bursts = 3;
  const BandwidthResult r = MeasureBandwidth(buffer.value(), spec);
  // A busy shared host may discard bursts (kDisturbed); a figure is published only when ok.
  ASSERT_TRUE(r.outcome == Outcome::kOk || r.outcome == Outcome::kDisturbed) << r.reason;
  EXPECT_TRUE(r.buffer.placement.verified()) << r.buffer.placement.split_mismatch;
  if (r.outcome == Outcome::kOk) {
    EXPECT_GT(r.bytes_per_second.median, 0);
  }
}

}  // namespace
}  // namespace numaprobe::kernels
