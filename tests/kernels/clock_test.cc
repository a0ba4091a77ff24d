// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/clock.h: the sample clock runs at the rate of
// CLOCK_MONOTONIC (on arm64 it is the counter scaled by its frequency).
#include "kernels/clock.h"

#include <chrono>
#include <cstdint>
#include <thread>

#include <gtest/gtest.h>

namespace numaprobe::kernels {
namespace {

TEST(SampleClockTest, NeverGoesBackwards) {
  std::int64_t previous = SampleClockNs();
  for (int i = 0; i < 100000; ++i) {
    const std::int64_t now = SampleClockNs();
    ASSERT_GE(now, previous) << "read " << i;
    previous = now;
  }
}

// Reads nested in time: the sample clock's interval lies inside the monotonic
// one and contains the sleep, whatever the scheduler does around them.
TEST(SampleClockTest, CountsNanosecondsAsClockMonotonicDoes) {
  constexpr std::int64_t kSleepNs = 50'000'000;
  const std::int64_t mono0 = MonotonicNs();
  const std::int64_t sample0 = SampleClockNs();
  std::this_thread::sleep_for(std::chrono::nanoseconds(kSleepNs));
  const std::int64_t sample1 = SampleClockNs();
  const std::int64_t mono1 = MonotonicNs();
  EXPECT_GE(sample1 - sample0, kSleepNs);
  // One step of either clock of slack (a 1 MHz counter's step is 1 µs).
  EXPECT_LE(sample1 - sample0, mono1 - mono0 + 1000);
}

// The arm64 counter's scaling, checked on every architecture.
TEST(CounterNsTest, ScalesTicksByTheFrequencyWithoutOverflow) {
  EXPECT_EQ(CounterNs(0, 25'000'000), 0);
  EXPECT_EQ(CounterNs(25'000'000, 25'000'000), 1'000'000'000);
  EXPECT_EQ(CounterNs(3, 25'000'000), 120);  // a 25 MHz tick is 40 ns
  EXPECT_EQ(CounterNs(1'000'000'000, 1'000'000'000), 1'000'000'000);
  // A year of uptime at 50 MHz: ticks * 1e9 would overflow 64 bits.
  constexpr std::uint64_t kYearTicks = 50'000'000ull * 86'400 * 365;
  EXPECT_EQ(CounterNs(kYearTicks + 1, 50'000'000), 1'000'000'000ll * 86'400 * 365 + 20);
}

#if defined(__aarch64__)
TEST(SampleClockTest, CounterFrequencyIsPlausible) {
  // The Arm ARM leaves it to the platform; parts ship 1 MHz to 1 GHz (Armv8.6+
  // fixes 1 GHz). Zero means firmware never set CNTFRQ_EL0, and SampleClockNs()
  // is then CLOCK_MONOTONIC; the emulator sets it.
  EXPECT_GE(CounterHz(), 1'000'000u);
  EXPECT_LE(CounterHz(), 5'000'000'000u);
}
#endif

}  // namespace
}  // namespace numaprobe::kernels
