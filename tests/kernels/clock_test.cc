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

#if defined(__aarch64__)
TEST(SampleClockTest, CounterFrequencyIsPlausible) {
  // The Arm ARM leaves it to the platform; parts ship 1 MHz to 1 GHz (Armv8.6+
  // fixes 1 GHz). Zero would mean firmware never set CNTFRQ_EL0.
  EXPECT_GE(CounterHz(), 1'000'000u);
  EXPECT_LE(CounterHz(), 5'000'000'000u);
}
#endif

}  // namespace
}  // namespace numaprobe::kernels
