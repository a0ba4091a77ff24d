#include "daemon/probing/buffer_pool.h"

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

constexpr std::size_t kMiB = 1u << 20;

BufferSettings Small(bool keep_between_probes) {
  BufferSettings settings;
  settings.latency_bytes = 0;  // the flushed default: 16 MiB for 40'000 loads
  settings.bandwidth_bytes = 32 * kMiB;
  settings.pages = kernels::PagePolicy::kSmall;
  settings.budget_bytes = 64 * kMiB;
  settings.keep_between_probes = keep_between_probes;
  return settings;
}

// The default latency buffer no longer grows with the LLC: a 32 MiB LLC
// would have wanted 256 MiB; the flushed buffer is 16 MiB on any machine.
TEST(BufferPool, DefaultLatencyBufferIsSmallAndFlushedWhateverTheLlc) {
  BufferPool pool(Small(false));
  auto latency = pool.Latency(0, 32 * kMiB);
  ASSERT_TRUE(latency.ok()) << latency.failure().reason;
  EXPECT_EQ(latency.value()->info().bytes, 16 * kMiB);
  EXPECT_TRUE(latency.value()->flushed());
}

// The daemon: nothing stays allocated after a probe.
TEST(BufferPool, EndProbeFreesEveryBufferUnlessKept) {
  BufferPool pool(Small(/*keep_between_probes=*/false));
  ASSERT_TRUE(pool.Latency(0, 8 * kMiB).ok());
  ASSERT_TRUE(pool.Bandwidth(0).ok());
  EXPECT_EQ(pool.bytes_in_use(), 48 * kMiB);
  pool.EndProbe();
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

// `numaprobe probe`: buffers are prepared once for the whole run.
TEST(BufferPool, KeptBuffersAreReusedAcrossProbes) {
  BufferPool pool(Small(/*keep_between_probes=*/true));
  auto latency = pool.Latency(0, 8 * kMiB);
  auto bandwidth = pool.Bandwidth(0);
  ASSERT_TRUE(latency.ok() && bandwidth.ok());
  pool.EndProbe();
  EXPECT_EQ(pool.bytes_in_use(), 48 * kMiB);
  EXPECT_EQ(pool.Latency(0, 8 * kMiB).value(), latency.value());
  EXPECT_EQ(pool.Bandwidth(0).value(), bandwidth.value());
}

TEST(BufferPool, ExplicitSizeOverTheBudgetFailsNamingIt) {
  BufferSettings settings = Small(false);
  settings.latency_bytes = 128 * kMiB;
  BufferPool pool(settings);
  auto latency = pool.Latency(0, 32 * kMiB);
  ASSERT_FALSE(latency.ok());
  EXPECT_EQ(latency.failure().outcome, kernels::Outcome::kAllocFailed);
  EXPECT_NE(latency.failure().reason.find("memory budget"), std::string::npos) << latency.failure().reason;
}

}  // namespace
}  // namespace numaprobe::daemon
