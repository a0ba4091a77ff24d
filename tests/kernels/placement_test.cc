// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/placement.cc
#include "kernels/placement.h"

#include <numaif.h>
#include <sys/mman.h>

#include <cstring>

#include <gtest/gtest.h>

#include "tests/kernels/numa_syscalls.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kPage = 4096;

// An anonymous mapping of `pages` pages, written on node 0 or left unfaulted.
// Written pages are bound to node 0: on a multi-node kernel (the VM suite runs
// these tests in guests) the default policy would place them on whichever node
// the test happens to run.
class Mapping {
 public:
  Mapping(std::size_t pages, bool write) : bytes_(pages * kPage) {
    data_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED || !write) return;
    const unsigned long node0 = 1;
    bound_ = mbind(data_, bytes_, MPOL_BIND, &node0, sizeof(node0) * 8, 0) == 0;
    std::memset(data_, 1, bytes_);
  }
  ~Mapping() {
    if (data_ != MAP_FAILED) munmap(data_, bytes_);
  }
  bool ok() const { return data_ != MAP_FAILED && bound_; }
  const void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  void* data_;
  bool bound_ = true;  // unwritten mappings are not bound
};

TEST(PlacementTest, WrittenMemoryVerifiesOnItsNode) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  Mapping m(64, /*write=*/true);
  ASSERT_TRUE(m.ok());
  const PlacementReport r = VerifyPlacement(m.data(), m.bytes(), kPage, 0);
  EXPECT_TRUE(r.verified()) << r.method;
  EXPECT_EQ(r.pages_checked, 64u);
  EXPECT_EQ(r.pages_misplaced, 0u);
  EXPECT_EQ(r.pages_unknown, 0u);
  EXPECT_EQ(r.observed_node, -1);
  EXPECT_EQ(r.expected_node, 0);
}

TEST(PlacementTest, RejectsMemoryNotOnTheRequestedNode) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  Mapping m(32, /*write=*/true);
  ASSERT_TRUE(m.ok());
  const PlacementReport r = VerifyPlacement(m.data(), m.bytes(), kPage, 1);
  EXPECT_FALSE(r.verified());
  EXPECT_EQ(r.pages_checked, 32u);
  EXPECT_EQ(r.pages_misplaced, 32u);
  EXPECT_EQ(r.observed_node, 0);
  EXPECT_EQ(r.misplaced_offset, 0u);

  const Failure f = PlacementFailure(r);
  EXPECT_EQ(f.outcome, Outcome::kPlacementMismatch);
  EXPECT_EQ(f.reason, "node 1 requested, page at offset 0 is on node 0 (32 of 32 pages misplaced)");
}

TEST(PlacementTest, UnfaultedMemoryIsUnknown) {
  Mapping m(16, /*write=*/false);
  ASSERT_TRUE(m.ok());
  const PlacementReport r = VerifyPlacement(m.data(), m.bytes(), kPage, 0);
  if (r.method != "move_pages") {
    // get_mempolicy faults pages in as if read, so it cannot see "not present".
    GTEST_SKIP() << "move_pages unavailable (method " << r.method << ")";
  }
  EXPECT_EQ(r.pages_unknown, 16u);
  EXPECT_FALSE(r.verified());
  EXPECT_EQ(PlacementFailure(r).outcome, Outcome::kPlacementUnverified);
}

TEST(PlacementTest, SamplingChecksExactlyMaxPages) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  Mapping m(256, /*write=*/true);
  ASSERT_TRUE(m.ok());
  const PlacementReport r = VerifyPlacement(m.data(), m.bytes(), kPage, 0, 10, 99);
  EXPECT_EQ(r.pages_checked, 10u);
  EXPECT_TRUE(r.verified());
  // More pages asked for than exist: every page once.
  EXPECT_EQ(VerifyPlacement(m.data(), m.bytes(), kPage, 0, 1000, 99).pages_checked, 256u);
}

TEST(PlacementTest, SpansSeveralBatches) {
  NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
  Mapping m(4096 + 100, /*write=*/true);
  ASSERT_TRUE(m.ok());
  const PlacementReport r = VerifyPlacement(m.data(), m.bytes(), kPage, 0);
  EXPECT_EQ(r.pages_checked, 4196u);
  EXPECT_TRUE(r.verified());
}

TEST(PlacementTest, NothingCheckedIsNotVerified) {
  const PlacementReport r = VerifyPlacement(nullptr, 0, kPage, 0);
  EXPECT_EQ(r.pages_checked, 0u);
  EXPECT_FALSE(r.verified());
}

}  // namespace
}  // namespace numaprobe::kernels
