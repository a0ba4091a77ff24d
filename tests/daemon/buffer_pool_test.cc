// SPDX-License-Identifier: Apache-2.0
// The pool itself, over a stand-in buffer that only has a size: reuse,
// freeing, the budget and recipes. The kinds' real buffers are tested in
// memory_buffers_test.cc.
#include "daemon/probing/buffer_pool.h"

#include <gtest/gtest.h>

#include "tests/byte_sizes.h"

namespace numaprobe::daemon {
namespace {

struct FakeInfo {
  std::size_t bytes = 0;
};
struct FakeBuffer {
  FakeInfo size;
  const FakeInfo& info() const { return size; }
};

BufferSettings Budget(std::size_t budget_bytes, bool keep_between_probes) {
  BufferSettings settings;
  settings.budget_bytes = budget_bytes;
  settings.keep_between_probes = keep_between_probes;
  return settings;
}

// Gets buffer `name` of `bytes` on node 0, counting the builds in `built`.
kernels::Expected<FakeBuffer*> Get(BufferPool& pool, const char* name, std::size_t bytes, int& built,
                                   const std::string& recipe = "r") {
  return pool.Get<FakeBuffer>(name, 0, recipe, bytes, [&]() -> kernels::Expected<FakeBuffer> {
    ++built;
    return FakeBuffer{{bytes}};
  });
}

// The daemon: nothing stays allocated after a probe.
TEST(BufferPool, EndProbeFreesEveryBufferUnlessKept) {
  BufferPool pool(Budget(64 * kMiB, /*keep_between_probes=*/false));
  int built = 0;
  ASSERT_TRUE(Get(pool, "a", 16 * kMiB, built).ok());
  ASSERT_TRUE(Get(pool, "b", 32 * kMiB, built).ok());
  EXPECT_EQ(pool.bytes_in_use(), 48 * kMiB);
  pool.EndProbe();
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

// `numaprobe probe`: buffers are prepared once for the whole run.
TEST(BufferPool, KeptBuffersAreReusedAcrossProbes) {
  BufferPool pool(Budget(64 * kMiB, /*keep_between_probes=*/true));
  int built = 0;
  auto a = Get(pool, "a", 16 * kMiB, built);
  ASSERT_TRUE(a.ok());
  pool.EndProbe();
  EXPECT_EQ(pool.bytes_in_use(), 16 * kMiB);
  EXPECT_EQ(Get(pool, "a", 16 * kMiB, built).value(), a.value());
  EXPECT_EQ(built, 1);
}

// A reload that changes what a buffer is made of never gets the old one.
TEST(BufferPool, AnotherRecipeRebuilds) {
  BufferPool pool(Budget(0, /*keep_between_probes=*/true));
  int built = 0;
  ASSERT_TRUE(Get(pool, "a", 16 * kMiB, built, "stride=128").ok());
  ASSERT_TRUE(Get(pool, "a", 16 * kMiB, built, "stride=256").ok());
  EXPECT_EQ(built, 2);
  EXPECT_EQ(pool.bytes_in_use(), 16 * kMiB);  // the old one is freed
}

TEST(BufferPool, DropFreesOnlyThatBuffer) {
  BufferPool pool(Budget(0, /*keep_between_probes=*/true));
  int built = 0;
  ASSERT_TRUE(Get(pool, "a", 16 * kMiB, built).ok());
  ASSERT_TRUE(Get(pool, "b", 32 * kMiB, built).ok());
  pool.Drop("a", 0);
  EXPECT_EQ(pool.bytes_in_use(), 32 * kMiB);
  ASSERT_TRUE(Get(pool, "a", 16 * kMiB, built).ok());
  EXPECT_EQ(built, 3);
}

TEST(BufferPool, TheLeastRecentlyUsedMakesRoom) {
  BufferPool pool(Budget(64 * kMiB, /*keep_between_probes=*/true));
  int built = 0;
  ASSERT_TRUE(Get(pool, "a", 32 * kMiB, built).ok());
  ASSERT_TRUE(Get(pool, "b", 32 * kMiB, built).ok());
  ASSERT_TRUE(Get(pool, "a", 32 * kMiB, built).ok());  // a is now the most recent
  ASSERT_TRUE(Get(pool, "c", 32 * kMiB, built).ok());  // evicts b
  EXPECT_EQ(pool.bytes_in_use(), 64 * kMiB);
  ASSERT_TRUE(Get(pool, "a", 32 * kMiB, built).ok());
  EXPECT_EQ(built, 3);
}

TEST(BufferPool, ExplicitSizeOverTheBudgetFailsNamingIt) {
  BufferPool pool(Budget(64 * kMiB, false));
  int built = 0;
  auto big = Get(pool, "a", 128 * kMiB, built);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(built, 0);
  EXPECT_EQ(big.failure().outcome, kernels::Outcome::kAllocFailed);
  EXPECT_NE(big.failure().reason.find("memory budget"), std::string::npos) << big.failure().reason;
}

}  // namespace
}  // namespace numaprobe::daemon
