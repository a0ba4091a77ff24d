// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/arena.cc
#include "kernels/arena.h"

#include <fstream>
#include <utility>

#include <gtest/gtest.h>

#include "tests/byte_sizes.h"
#include "tests/kernels/numa_syscalls.h"

namespace numaprobe::kernels {
namespace {

std::size_t HugetlbPoolPages() {
  std::ifstream in("/proc/sys/vm/nr_hugepages");
  std::size_t pages = 0;
  in >> pages;
  return pages;
}

TEST(ArenaTest, CreatesVerifiedWritableMemoryOnNode0) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto arena = Arena::Create({.bytes = 3 * kMiB, .node = 0, .pages = PagePolicy::kAuto});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  EXPECT_NE(arena->data(), nullptr);
  EXPECT_GE(arena->bytes(), 3 * kMiB);
  EXPECT_EQ(arena->bytes() % arena->page_bytes(), 0u);
  EXPECT_EQ(arena->node(), 0);
  const PlacementReport& p = arena->info().placement;
  EXPECT_TRUE(p.verified()) << p.method;
  EXPECT_EQ(p.pages_checked, arena->bytes() / arena->page_bytes());
  arena->data()[arena->bytes() - 1] = std::byte{42};
  EXPECT_EQ(arena->data()[arena->bytes() - 1], std::byte{42});
}

TEST(ArenaTest, SmallPolicyGives4KiBPages) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto arena = Arena::Create({.bytes = 16 << 10, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  EXPECT_EQ(arena->info().page_kind, PageKind::kSmall4K);
  EXPECT_EQ(arena->bytes(), 16u << 10);  // not rounded to 2 MiB
  EXPECT_EQ(arena->page_bytes(), 4096u);
  EXPECT_EQ(arena->info().huge_fraction, 0);
  EXPECT_EQ(arena->info().placement.pages_checked, 4u);
}

TEST(ArenaTest, ThpPolicyReportsTheKindItGot) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto arena = Arena::Create({.bytes = 8 * kMiB, .node = 0, .pages = PagePolicy::kThp});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  const BufferInfo& info = arena->info();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena->data()) % (2 * kMiB), 0u);
  EXPECT_GE(info.huge_fraction, 0);
  EXPECT_LE(info.huge_fraction, 1);
  if (info.huge_fraction > 0.5) {
    EXPECT_EQ(info.page_kind, PageKind::kThp2M);
    EXPECT_EQ(arena->page_bytes(), 2 * kMiB);
  } else {
    EXPECT_EQ(info.page_kind, PageKind::kSmall4K);
    EXPECT_EQ(arena->page_bytes(), 4096u);
  }
  EXPECT_NE(info.page_kind, PageKind::kHugetlb2M);
}

TEST(ArenaTest, HugetlbWithoutPoolFailsNamingThePool) {
  if (HugetlbPoolPages() != 0) GTEST_SKIP() << "a hugetlb pool exists on this machine";
  auto arena = Arena::Create({.bytes = 4 * kMiB, .node = 0, .pages = PagePolicy::kHugetlb});
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.failure().outcome, Outcome::kAllocFailed);
  EXPECT_NE(arena.failure().reason.find("nr_hugepages"), std::string::npos) << arena.failure().reason;
  EXPECT_EQ(arena.failure().reason.rfind("node 0: ", 0), 0u) << arena.failure().reason;
}

TEST(ArenaTest, AbsentNodeFailsNamingIt) {
  auto arena = Arena::Create({.bytes = 1 * kMiB, .node = 999, .pages = PagePolicy::kSmall});
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.failure().outcome, Outcome::kBindFailed);
  EXPECT_EQ(arena.failure().reason.rfind("node 999: mbind: ", 0), 0u) << arena.failure().reason;
}

TEST(ArenaTest, InvalidSpecsAreRejected) {
  auto empty = Arena::Create({.bytes = 0, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.failure().outcome, Outcome::kInvalidSpec);
  auto negative = Arena::Create({.bytes = 4096, .node = -1, .pages = PagePolicy::kSmall});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.failure().outcome, Outcome::kInvalidSpec);
}

TEST(ArenaTest, MoveTransfersOwnership) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto created = Arena::Create({.bytes = 64 << 10, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_TRUE(created.ok()) << created.failure().reason;
  Arena a = std::move(created).value();
  std::byte* data = a.data();
  data[0] = std::byte{7};

  Arena b = std::move(a);
  EXPECT_EQ(b.data(), data);
  // The moved-from state is part of the contract.
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.data()[0], std::byte{7});

  auto other = Arena::Create({.bytes = 64 << 10, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_TRUE(other.ok());
  b = std::move(other).value();  // releases the first mapping
  EXPECT_NE(b.data(), nullptr);
  EXPECT_EQ(b.bytes(), 64u << 10);
}

TEST(ArenaTest, ReverifySamplesAndUpdatesPlacement) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto arena = Arena::Create({.bytes = 1 * kMiB, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  const PlacementReport& r = arena->Reverify(8, 1);
  EXPECT_EQ(r.pages_checked, 8u);
  EXPECT_TRUE(r.verified());
  EXPECT_EQ(arena->info().placement.pages_checked, 8u);
}

}  // namespace
}  // namespace numaprobe::kernels
