// SPDX-License-Identifier: Apache-2.0
// The clocks probes use, read only here. clock_gettime(CLOCK_MONOTONIC) goes
// through the vDSO (~25 ns), negligible against samples of 10^4+ loads; thread CPU
// time is what the daemon's duty-cycle budget is charged in.
//
// SampleClockNs() times the probes' samples. On x86-64 it is CLOCK_MONOTONIC. On
// arm64 it reads the virtual counter CNTVCT_EL0 directly (what the vDSO reads
// too, without its ~20-40 ns of bookkeeping), after an ISB so the read cannot
// be taken before the instructions ahead of it complete, and scales it by
// CNTFRQ_EL0. That counter ticks at 1-50 MHz on many parts (a tick of 20 ns
// to 1 µs): every run measures the step of SampleClockNs() and refuses samples
// shorter than 100 steps (timer_resolution.h), so a coarse counter is caught
// like any other coarse clock. Its epoch is not CLOCK_MONOTONIC's: compare
// SampleClockNs() only with SampleClockNs(). Where firmware left CNTFRQ_EL0 at
// 0, SampleClockNs() is CLOCK_MONOTONIC on arm64 too.
#pragma once

#include <time.h>

#include <cstdint>

namespace numaprobe::kernels {

inline std::int64_t ReadClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
inline std::int64_t MonotonicNs() { return ReadClockNs(CLOCK_MONOTONIC); }
inline std::int64_t ThreadCpuNs() { return ReadClockNs(CLOCK_THREAD_CPUTIME_ID); }

// Nanoseconds in `ticks` of a counter running at `hz` (> 0) Hz. Whole seconds
// and the remainder apart: ticks * 1e9 would overflow after ~6 minutes of
// uptime at 50 MHz.
constexpr std::int64_t CounterNs(std::uint64_t ticks, std::uint64_t hz) {
  return static_cast<std::int64_t>(ticks / hz * 1'000'000'000 + ticks % hz * 1'000'000'000 / hz);
}

#if defined(__aarch64__)
inline std::uint64_t CounterTicks() {
  std::uint64_t ticks;
  asm volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(ticks) : : "memory");
  return ticks;
}
inline std::uint64_t CounterHz() {
  std::uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz;
}
inline std::int64_t SampleClockNs() {
  static const std::uint64_t hz = CounterHz();
  // A firmware that never programmed CNTFRQ_EL0 leaves it 0; the kernel then
  // takes the counter's rate from the device tree, so its clock is right
  // where a figure scaled by this register would not be.
  if (hz == 0) return MonotonicNs();
  return CounterNs(CounterTicks(), hz);
}
#else
inline std::int64_t SampleClockNs() { return MonotonicNs(); }
#endif

}  // namespace numaprobe::kernels
