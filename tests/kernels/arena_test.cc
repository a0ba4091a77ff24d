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

// The host's base page (4 KiB on x86-64; 4, 16 or 64 KiB on arm64), not an assumed 4 KiB.
std::size_t BasePage() {
  EXPECT_TRUE(HostPageSizes().ok()) << HostPageSizes().failure().reason;
  return HostPageSizes().ok() ? HostPageSizes()->base : 4096;
}

TEST(ArenaTest, SmallPolicyGivesTheHostsBasePages) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  const std::size_t base = BasePage();
  auto arena = Arena::Create({.bytes = 4 * base, .node = 0, .pages = PagePolicy::kSmall});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  EXPECT_EQ(arena->info().page_kind, PageKind::kBase);
  EXPECT_EQ(arena->bytes(), 4 * base);  // not rounded to 2 MiB
  EXPECT_EQ(arena->page_bytes(), base);
  EXPECT_EQ(PageSizeName(arena->info()), PageSizeText(base));
  EXPECT_EQ(arena->info().huge_fraction, 0);
  EXPECT_EQ(arena->info().placement.pages_checked, 4u);
}

TEST(ArenaTest, ThpPolicyReportsTheKindItGot) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  auto arena = Arena::Create({.bytes = 8 * kMiB, .node = 0, .pages = PagePolicy::kThp});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  const BufferInfo& info = arena->info();
  const std::size_t thp = HostPageSizes().ok() ? HostPageSizes()->thp : 0;
  // Aligned to the PMD size where a PMD page fits the buffer (2 MiB on x86-64).
  if (ThpFits(HostPageSizes().value(), 8 * kMiB)) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena->data()) % thp, 0u);
  }
  EXPECT_GE(info.huge_fraction, 0);
  EXPECT_LE(info.huge_fraction, 1);
  if (info.huge_fraction > 0.5) {
    EXPECT_EQ(info.page_kind, PageKind::kThp);
    EXPECT_EQ(arena->page_bytes(), thp);
    EXPECT_EQ(PageSizeName(info), PageSizeText(thp) + "-thp");
  } else {
    EXPECT_EQ(info.page_kind, PageKind::kBase);
    EXPECT_EQ(arena->page_bytes(), BasePage());
  }
  EXPECT_NE(info.page_kind, PageKind::kHugetlb);
}

TEST(ArenaTest, HugetlbWithoutPoolFailsNamingThePool) {
  if (HugetlbPoolPages() != 0) GTEST_SKIP() << "a hugetlb pool exists on this machine";
  auto arena = Arena::Create({.bytes = 4 * kMiB, .node = 0, .pages = PagePolicy::kHugetlb});
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.failure().outcome, Outcome::kAllocFailed);
  EXPECT_NE(arena.failure().reason.find("nr_hugepages"), std::string::npos) << arena.failure().reason;
  EXPECT_EQ(arena.failure().reason.rfind("node 0: ", 0), 0u) << arena.failure().reason;
}

// The sizes are the kernel's, injected here: a kernel without THP (no
// hpage_pmd_size) maps the buffer on base pages, whatever the policy asked.
TEST(ArenaTest, KernelWithoutThpGetsBasePages) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  const PageSizes no_thp{.base = BasePage(), .thp = 0, .hugetlb = {}, .sysfs_root = "/nonexistent"};
  auto arena = Arena::Create({.bytes = 8 * kMiB, .node = 0, .pages = PagePolicy::kThp, .page_sizes = &no_thp});
  ASSERT_TRUE(arena.ok()) << arena.failure().reason;
  EXPECT_EQ(arena->info().page_kind, PageKind::kBase);
  EXPECT_EQ(arena->page_bytes(), BasePage());
  EXPECT_EQ(arena->bytes(), 8 * kMiB);
  EXPECT_TRUE(arena->info().placement.verified());
}

// A kernel that offers no hugetlb size of 2 MiB or more: a clear failure.
TEST(ArenaTest, HugetlbWithoutSizesFailsNamingTheDirectory) {
  const PageSizes none{.base = BasePage(), .thp = 0, .hugetlb = {}, .sysfs_root = "/nonexistent"};
  auto arena = Arena::Create({.bytes = 4 * kMiB, .node = 0, .pages = PagePolicy::kHugetlb, .page_sizes = &none});
  ASSERT_FALSE(arena.ok());
  EXPECT_EQ(arena.failure().outcome, Outcome::kAllocFailed);
  EXPECT_EQ(arena.failure().reason,
            "node 0: hugetlb: this kernel offers no hugetlb page of 2 MiB up to the buffer's 4MiB "
            "(/nonexistent/kernel/mm/hugepages)");
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
