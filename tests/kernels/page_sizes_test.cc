// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/page_sizes.cc on the sysfs trees of
// tests/fixtures/page_sizes (README.md there): x86-64 with 4 KiB pages, arm64
// with 16 KiB and 64 KiB pages, a kernel without THP, and no sysfs at all.
#include "kernels/page_sizes.h"

#include <linux/mman.h>
#include <sys/mman.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/byte_sizes.h"

namespace numaprobe::kernels {
namespace {

std::string Tree(const std::string& name) {
  return (std::filesystem::path(NUMAPROBE_FIXTURES) / "page_sizes" / name).string();
}

PageSizes Read(const std::string& tree, std::size_t base) {
  auto sizes = ReadPageSizes(Tree(tree), base);
  EXPECT_TRUE(sizes.ok()) << sizes.failure().reason;
  return sizes.ok() ? sizes.value() : PageSizes{};
}

constexpr std::size_t kGiB = std::size_t{1} << 30;

// The page_size a buffer of these pages reports.
std::string NameOf(PageKind kind, std::size_t page_bytes) {
  BufferInfo buffer;
  buffer.bytes = page_bytes;
  buffer.page_kind = kind;
  buffer.page_bytes = page_bytes;
  return PageSizeName(buffer);
}

TEST(PageSizesTest, X86With4KiBPages) {
  const PageSizes s = Read("x86_4k", 4096);
  EXPECT_EQ(s.base, 4096u);
  EXPECT_EQ(s.thp, 2 * kMiB);
  EXPECT_EQ(s.hugetlb, (std::vector<HugetlbSize>{{2 * kMiB, 16}, {kGiB, 0}}));
  EXPECT_EQ(FreeHugetlbPages(s, 0, 2 * kMiB), 16u);
  EXPECT_EQ(FreeHugetlbPages(s, 1, 2 * kMiB), 0u);  // no such node: no pool
  // What x86-64 hosts had before the sizes were read: the same buffers,
  // windows and names, so nothing an operator sees there changes.
  EXPECT_EQ(HugetlbCandidates(s, 16 * kMiB), std::vector<std::size_t>{2 * kMiB});
  EXPECT_EQ(HugetlbCandidates(s, 1 * kMiB), std::vector<std::size_t>{2 * kMiB});
  EXPECT_EQ(HugetlbCandidates(s, 2 * kGiB), (std::vector<std::size_t>{2 * kMiB, kGiB}));
  EXPECT_TRUE(ThpFits(s, 16 * kMiB));
  EXPECT_TRUE(ThpFits(s, 1 * kMiB));
  EXPECT_EQ(TlbLocalWindow(PageKind::kBase, s.base), 256u << 10);
  EXPECT_EQ(TlbLocalWindow(PageKind::kThp, s.thp), 2 * kMiB);
  EXPECT_EQ(HugetlbMmapFlags(2 * kMiB), MAP_HUGETLB | MAP_HUGE_2MB);
  EXPECT_EQ(HugetlbMmapFlags(kGiB), MAP_HUGETLB | MAP_HUGE_1GB);
  EXPECT_EQ(NameOf(PageKind::kBase, s.base), "4KiB");
  EXPECT_EQ(NameOf(PageKind::kThp, s.thp), "2MiB-thp");
  EXPECT_EQ(NameOf(PageKind::kHugetlb, 2 * kMiB), "2MiB-hugetlb");
}

TEST(PageSizesTest, Arm64With16KiBPages) {
  const PageSizes s = Read("arm64_16k", 16 << 10);
  EXPECT_EQ(s.base, 16u << 10);
  EXPECT_EQ(s.thp, 32 * kMiB);
  EXPECT_EQ(s.hugetlb, (std::vector<HugetlbSize>{{2 * kMiB, 0}, {32 * kMiB, 4}, {kGiB, 0}}));
  // The default 16 MiB latency buffer: no 32 MiB page for it, THP or hugetlb.
  EXPECT_FALSE(ThpFits(s, 16 * kMiB));
  EXPECT_EQ(HugetlbCandidates(s, 16 * kMiB), std::vector<std::size_t>{2 * kMiB});
  EXPECT_TRUE(ThpFits(s, 256 * kMiB));
  EXPECT_EQ(HugetlbCandidates(s, 256 * kMiB), (std::vector<std::size_t>{2 * kMiB, 32 * kMiB}));
  EXPECT_EQ(FreeHugetlbPages(s, 0, 32 * kMiB), 4u);
  EXPECT_EQ(TlbLocalWindow(PageKind::kBase, s.base), 1 * kMiB);  // 64 pages of 16 KiB
  EXPECT_EQ(TlbLocalWindow(PageKind::kThp, s.thp), 2 * kMiB);
  EXPECT_EQ(HugetlbMmapFlags(32 * kMiB), MAP_HUGETLB | (25 << MAP_HUGE_SHIFT));
  EXPECT_EQ(NameOf(PageKind::kBase, s.base), "16KiB");
  EXPECT_EQ(NameOf(PageKind::kThp, s.thp), "32MiB-thp");
}

TEST(PageSizesTest, Arm64With64KiBPages) {
  const PageSizes s = Read("arm64_64k", 64 << 10);
  EXPECT_EQ(s.base, 64u << 10);
  EXPECT_EQ(s.thp, 512 * kMiB);
  EXPECT_EQ(s.hugetlb, (std::vector<HugetlbSize>{{64 << 10, 0}, {2 * kMiB, 8}, {512 * kMiB, 2}, {16 * kGiB, 0}}));
  // 16 MiB: base pages (no 512 MiB THP), or 2 MiB contiguous-PTE hugetlb; never
  // the 64 KiB size, which is a base page.
  EXPECT_FALSE(ThpFits(s, 16 * kMiB));
  EXPECT_EQ(HugetlbCandidates(s, 16 * kMiB), std::vector<std::size_t>{2 * kMiB});
  EXPECT_TRUE(ThpFits(s, 1 * kGiB));
  EXPECT_EQ(HugetlbCandidates(s, 1 * kGiB), (std::vector<std::size_t>{2 * kMiB, 512 * kMiB}));
  EXPECT_EQ(FreeHugetlbPages(s, 0, 512 * kMiB), 1u);
  EXPECT_EQ(FreeHugetlbPages(s, 0, 2 * kMiB), 8u);
  // 32 pages of 64 KiB: within a 48-entry L1 dTLB (docs/measurement.md).
  EXPECT_EQ(TlbLocalWindow(PageKind::kBase, s.base), 2 * kMiB);
  EXPECT_EQ(TlbLocalWindow(PageKind::kThp, s.thp), 2 * kMiB);
  EXPECT_EQ(HugetlbMmapFlags(512 * kMiB), MAP_HUGETLB | (29 << MAP_HUGE_SHIFT));
  EXPECT_EQ(HugetlbMmapFlags(16 * kGiB), MAP_HUGETLB | MAP_HUGE_16GB);
  EXPECT_EQ(NameOf(PageKind::kBase, s.base), "64KiB");
  EXPECT_EQ(NameOf(PageKind::kThp, s.thp), "512MiB-thp");
  EXPECT_EQ(NameOf(PageKind::kHugetlb, 16 * kGiB), "16GiB-hugetlb");
  EXPECT_EQ(DescribePageSizes(s),
            "base 64KiB, THP 512MiB, hugetlb 64KiB (0 reserved), 2MiB (8 reserved), 512MiB (2 reserved), "
            "16GiB (0 reserved)");
}

TEST(PageSizesTest, KernelWithoutThpHasNoPmdSize) {
  const PageSizes s = Read("no_thp", 4096);
  EXPECT_EQ(s.thp, 0u);
  EXPECT_FALSE(ThpFits(s, 1 * kGiB));
  EXPECT_EQ(s.hugetlb, (std::vector<HugetlbSize>{{2 * kMiB, 0}}));
}

// No /sys mounted (a bare chroot): base pages only, and a clear outcome.
TEST(PageSizesTest, MissingSysfsMeansBasePagesOnly) {
  const PageSizes s = Read("no_such_tree", 65536);
  EXPECT_EQ(s.base, 65536u);
  EXPECT_EQ(s.thp, 0u);
  EXPECT_TRUE(s.hugetlb.empty());
  EXPECT_FALSE(ThpFits(s, 1 * kGiB));
  EXPECT_TRUE(HugetlbCandidates(s, 1 * kGiB).empty());
  EXPECT_EQ(FreeHugetlbPages(s, 0, 2 * kMiB), 0u);
  EXPECT_EQ(DescribePageSizes(s), "base 64KiB, THP none, hugetlb none");
}

TEST(PageSizesTest, BadInputFailsNamingIt) {
  auto malformed = ReadPageSizes(Tree("malformed"), 4096);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.failure().outcome, Outcome::kInvalidSpec);
  EXPECT_NE(malformed.failure().reason.find("hpage_pmd_size: not a power-of-two size in bytes: \"2M"),
            std::string::npos)
      << malformed.failure().reason;
  for (const std::size_t base : {std::size_t{0}, std::size_t{2048}, std::size_t{12288}}) {
    auto bad = ReadPageSizes(Tree("x86_4k"), base);
    ASSERT_FALSE(bad.ok()) << base;
    EXPECT_NE(bad.failure().reason.find("base page size " + std::to_string(base)), std::string::npos)
        << bad.failure().reason;
  }
}

// This host's sizes are read and consistent, whatever the host is.
TEST(PageSizesTest, HostSizesAreReadable) {
  const auto& host = HostPageSizes();
  ASSERT_TRUE(host.ok()) << host.failure().reason;
  EXPECT_GE(host->base, 4096u);
  EXPECT_TRUE(host->thp == 0 || host->thp > host->base);
  for (const HugetlbSize& h : host->hugetlb) EXPECT_GE(h.bytes, host->base);
  EXPECT_FALSE(DescribePageSizes(host.value()).empty());
}

}  // namespace
}  // namespace numaprobe::kernels
