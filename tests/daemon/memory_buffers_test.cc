// SPDX-License-Identifier: Apache-2.0
// The memory kinds' shared buffers (daemon/probing/kinds/memory_buffers.h),
// really allocated on node 0.
#include "daemon/probing/kinds/memory_buffers.h"

#include <gtest/gtest.h>

#include "tests/byte_sizes.h"
#include "tests/kernels/numa_syscalls.h"

namespace numaprobe::daemon {
namespace {

class MemoryBuffers : public ::testing::Test {
 protected:
  void SetUp() override {
    NUMAPROBE_SKIP_WITHOUT_NUMA_SYSCALLS();
    auto host = kernels::Topology::FromHost();
    ASSERT_TRUE(host.ok()) << host.failure().reason;
    topology_ = std::move(host).value();
    settings_.Of<LatencySettings>().stride = 128;
    settings_.Of<BandwidthSettings>().buffer_bytes = 32 * kMiB;
  }
  BufferPool pool_{BufferSettings{kernels::PagePolicy::kSmall, 64 * kMiB, false}};
  kernels::Topology topology_;
  ProbeSettings settings_;
  ProbeLock lock_;
};

// The default latency buffer no longer grows with the LLC: a 32 MiB LLC
// would have wanted 256 MiB; the flushed buffer is 16 MiB on any machine.
TEST_F(MemoryBuffers, DefaultChaseBufferIsSmallAndFlushedWhateverTheLlc) {
  ProbeRunner runner(topology_, pool_, settings_, lock_);
  auto chase = ChaseBuffer(runner, 0, 32 * kMiB);
  ASSERT_TRUE(chase.ok()) << chase.failure().reason;
  EXPECT_EQ(chase.value()->info().bytes, 16 * kMiB);
  EXPECT_TRUE(chase.value()->flushed());
}

// loaded_latency uses both on one node: each is prepared once per visit.
TEST_F(MemoryBuffers, BothKindsOfBufferShareThePool) {
  ProbeRunner runner(topology_, pool_, settings_, lock_);
  auto chase = ChaseBuffer(runner, 0, 8 * kMiB);
  auto stream = StreamBuffer(runner, 0);
  ASSERT_TRUE(chase.ok() && stream.ok());
  EXPECT_EQ(pool_.bytes_in_use(), 48 * kMiB);
  EXPECT_EQ(ChaseBuffer(runner, 0, 8 * kMiB).value(), chase.value());
  DropStreamBuffer(runner, 0);
  EXPECT_EQ(pool_.bytes_in_use(), 16 * kMiB);
  DropChaseBuffer(runner, 0);
  EXPECT_EQ(pool_.bytes_in_use(), 0u);
}

TEST_F(MemoryBuffers, ExplicitChaseSizeOverTheBudgetFailsNamingIt) {
  settings_.Of<LatencySettings>().buffer_bytes = 128 * kMiB;
  ProbeRunner runner(topology_, pool_, settings_, lock_);
  auto chase = ChaseBuffer(runner, 0, 32 * kMiB);
  ASSERT_FALSE(chase.ok());
  EXPECT_EQ(chase.failure().outcome, kernels::Outcome::kAllocFailed);
  EXPECT_NE(chase.failure().reason.find("memory budget"), std::string::npos) << chase.failure().reason;
}

}  // namespace
}  // namespace numaprobe::daemon
