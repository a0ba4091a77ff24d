// The two clocks probes use, read only here. clock_gettime(CLOCK_MONOTONIC) goes
// through the vDSO (~25 ns), negligible against samples of 10^4+ loads; thread CPU
// time is what the daemon's duty-cycle budget is charged in. Every run measures the
// step of MonotonicNs() and refuses samples shorter than 100 steps
// (timer_resolution.h), so a port that reads another counter here (arm64's
// CNTVCT_EL0 ticks at 1-50 MHz) is checked the same way.
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

}  // namespace numaprobe::kernels
