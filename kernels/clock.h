// The two clocks probes use. clock_gettime(CLOCK_MONOTONIC) goes through the vDSO
// (~25 ns), negligible against samples of 10^4+ loads; thread CPU time is what the
// daemon's duty-cycle budget is charged in.
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
