// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/chase.cc
#include "kernels/chase.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace numaprobe::kernels {
namespace {

struct ChaseCase {
  std::size_t bytes;
  std::size_t stride;
  std::size_t window_bytes;
};

// Links are stored at element starts, which only need pointer alignment.
std::unique_ptr<std::byte[]> Buffer(std::size_t bytes) { return std::make_unique<std::byte[]>(bytes); }

class ChaseCycleTest : public ::testing::TestWithParam<ChaseCase> {};

TEST_P(ChaseCycleTest, ChainVisitsEveryElementOncePerLap) {
  const ChaseCase c = GetParam();
  const ChaseLayout layout{.bytes = c.bytes, .stride = c.stride, .window_bytes = c.window_bytes};
  for (std::uint64_t seed : {0ull, 1ull, 0xdeadbeefull}) {
    auto buf = Buffer(c.bytes);
    LinkChase(buf.get(), layout, ChaseOrder(layout, seed));
    EXPECT_TRUE(IsSingleCycle(buf.get(), layout)) << "seed " << seed;
    // Chase agrees: after exactly one lap it is back at element 0.
    EXPECT_EQ(Chase(buf.get(), layout.elements()), buf.get());
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ChaseCycleTest,
                         ::testing::Values(ChaseCase{256, 128, 256}, ChaseCase{16 << 10, 64, 4 << 10},
                                           ChaseCase{1 << 20, 128, 256 << 10}, ChaseCase{1 << 20, 256, 64 << 10},
                                           ChaseCase{(1 << 20) + 3 * 128, 128, 256 << 10},  // partial
                                           ChaseCase{4 << 20, 128, 2 << 20}));

TEST(ChaseTest, CorruptedLinkIsDetected) {
  const ChaseLayout layout{.bytes = 64 << 10, .stride = 128, .window_bytes = 16 << 10};
  const auto order = ChaseOrder(layout, 7);
  auto buf = Buffer(layout.bytes);

  LinkChase(buf.get(), layout, order);
  void* self = buf.get() + order[5] * layout.stride;  // a two-element short cut
  std::memcpy(buf.get() + order[5] * layout.stride, &self, sizeof(self));
  EXPECT_FALSE(IsSingleCycle(buf.get(), layout));

  LinkChase(buf.get(), layout, order);
  void* misaligned = buf.get() + order[9] * layout.stride + 8;
  std::memcpy(buf.get() + order[3] * layout.stride, &misaligned, sizeof(misaligned));
  EXPECT_FALSE(IsSingleCycle(buf.get(), layout));

  LinkChase(buf.get(), layout, order);
  void* outside = buf.get() + layout.bytes;
  std::memcpy(buf.get() + order[3] * layout.stride, &outside, sizeof(outside));
  EXPECT_FALSE(IsSingleCycle(buf.get(), layout));
}

TEST(ChaseTest, OrderIsAPermutation) {
  const ChaseLayout layout{.bytes = 1 << 20, .stride = 128, .window_bytes = 64 << 10};
  auto order = ChaseOrder(layout, 42);
  ASSERT_EQ(order.size(), layout.elements());
  std::sort(order.begin(), order.end());
  std::vector<std::uint32_t> expected(layout.elements());
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(order, expected);
}

TEST(ChaseTest, SameSeedSameOrderOtherSeedOtherOrder) {
  const ChaseLayout layout{.bytes = 1 << 20, .stride = 128, .window_bytes = 64 << 10};
  EXPECT_EQ(ChaseOrder(layout, 1), ChaseOrder(layout, 1));
  EXPECT_NE(ChaseOrder(layout, 1), ChaseOrder(layout, 2));
}

TEST(ChaseTest, WindowsAreVisitedWholeInShuffledOrder) {
  const ChaseLayout layout{.bytes = 4 << 20, .stride = 256, .window_bytes = 256 << 10};
  const std::size_t per_window = layout.window_bytes / layout.stride;
  const auto order = ChaseOrder(layout, 3);

  // TLB locality: the order is a run of whole windows, one after another.
  std::vector<std::uint32_t> window_order;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < order.size(); i += per_window) {
    const std::uint32_t w = order[i] / per_window;
    for (std::size_t j = i; j < i + per_window; ++j) {
      ASSERT_EQ(order[j] / per_window, w) << "element " << j << " left its window";
    }
    EXPECT_TRUE(seen.insert(w).second) << "window " << w << " visited twice";
    window_order.push_back(w);
  }
  EXPECT_EQ(seen.size(), layout.bytes / layout.window_bytes);
  EXPECT_FALSE(std::is_sorted(window_order.begin(), window_order.end()));
  // Inside a window the order is neither ascending nor descending.
  EXPECT_FALSE(std::is_sorted(order.begin(), order.begin() + per_window));
  EXPECT_FALSE(std::is_sorted(order.begin(), order.begin() + per_window, std::greater<>()));
}

TEST(ChaseTest, ChaseFollowsLoadsCountExactly) {
  // Sequential order makes the position after n loads predictable, including
  // counts that are not a multiple of the unroll factor.
  const ChaseLayout layout{.bytes = 100 * 64, .stride = 64, .window_bytes = 0};
  std::vector<std::uint32_t> order(layout.elements());
  std::iota(order.begin(), order.end(), 0u);
  auto buf = Buffer(layout.bytes);
  LinkChase(buf.get(), layout, order);
  for (std::uint64_t loads : {0, 1, 15, 16, 17, 33, 99, 250}) {
    EXPECT_EQ(Chase(buf.get(), loads), buf.get() + (loads % 100) * 64) << loads << " loads";
  }
}

}  // namespace
}  // namespace numaprobe::kernels
