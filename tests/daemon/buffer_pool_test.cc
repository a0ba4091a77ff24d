#include "daemon/probing/buffer_pool.h"

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

constexpr std::size_t kMiB = 1u << 20;

BufferSettings Small(bool bandwidth_enabled) {
  BufferSettings settings;
  settings.latency_bytes = 0;  // automatic, from the LLC
  settings.bandwidth_bytes = 32 * kMiB;
  settings.pages = kernels::PagePolicy::kSmall;
  settings.budget_bytes = 64 * kMiB;
  settings.bandwidth_enabled = bandwidth_enabled;
  return settings;
}

// A 32 MiB LLC wants a 256 MiB chase buffer at the default stride: far over a
// 64 MiB budget. The buffer is capped so that the node's bandwidth buffer
// still fits beside it, instead of failing or evicting every round.
TEST(BufferPool, AutomaticLatencyBufferLeavesRoomForTheBandwidthBuffer) {
  BufferPool pool(Small(/*bandwidth_enabled=*/true));
  auto latency = pool.Latency(0, 32 * kMiB);
  ASSERT_TRUE(latency.ok()) << latency.failure().reason;
  EXPECT_EQ(latency.value()->info().bytes, 32 * kMiB);
  auto bandwidth = pool.Bandwidth(0);
  ASSERT_TRUE(bandwidth.ok()) << bandwidth.failure().reason;
  EXPECT_EQ(pool.bytes_in_use(), 64 * kMiB);
  // Both stay prepared: asking again returns the same buffers, nothing rebuilt.
  EXPECT_EQ(pool.Latency(0, 32 * kMiB).value(), latency.value());
  EXPECT_EQ(pool.Bandwidth(0).value(), bandwidth.value());
}

TEST(BufferPool, WithoutBandwidthTheLatencyBufferMayUseTheWholeBudget) {
  BufferPool pool(Small(/*bandwidth_enabled=*/false));
  auto latency = pool.Latency(0, 32 * kMiB);
  ASSERT_TRUE(latency.ok()) << latency.failure().reason;
  EXPECT_EQ(latency.value()->info().bytes, 64 * kMiB);
}

TEST(BufferPool, SmallLlcIsNotCapped) {
  BufferPool pool(Small(/*bandwidth_enabled=*/true));
  auto latency = pool.Latency(0, 2 * kMiB);  // wants the 16 MiB minimum
  ASSERT_TRUE(latency.ok()) << latency.failure().reason;
  EXPECT_EQ(latency.value()->info().bytes, 16 * kMiB);
}

TEST(BufferPool, ExplicitSizeOverTheBudgetFailsNamingIt) {
  BufferSettings settings = Small(true);
  settings.latency_bytes = 128 * kMiB;
  BufferPool pool(settings);
  auto latency = pool.Latency(0, 32 * kMiB);
  ASSERT_FALSE(latency.ok());
  EXPECT_EQ(latency.failure().outcome, kernels::Outcome::kAllocFailed);
  EXPECT_NE(latency.failure().reason.find("memory budget"), std::string::npos) << latency.failure().reason;
}

}  // namespace
}  // namespace numaprobe::daemon
