// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/run_cpu_meter.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include "kernels/clock.h"

namespace numaprobe::daemon {

namespace {

// The CPU clock of thread `tid` of this process: what glibc's
// pthread_getcpuclockid builds from a thread's id (Linux's per-thread CPU
// clock, CPUCLOCK_SCHED), for threads this code holds no pthread_t of.
clockid_t ThreadClock(pid_t tid) { return static_cast<clockid_t>((~static_cast<std::uint32_t>(tid) << 3) | 6u); }

// None once the thread has exited.
std::optional<std::int64_t> ThreadCpuNsOf(pid_t tid) {
  timespec ts{};
  if (clock_gettime(ThreadClock(tid), &ts) != 0) return std::nullopt;
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

RunCpuMeter RunCpuMeter::Start(const char* task_dir) {
  RunCpuMeter meter;
  const pid_t self = gettid();
  if (DIR* dir = opendir(task_dir)) {
    while (const dirent* entry = readdir(dir)) {
      pid_t tid = 0;
      const char* end = entry->d_name + std::strlen(entry->d_name);
      if (std::from_chars(entry->d_name, end, tid).ptr != end || tid == self) continue;
      if (const std::optional<std::int64_t> cpu = ThreadCpuNsOf(tid)) meter.others_.push_back({tid, *cpu});
    }
    closedir(dir);
  }
  // Online CPUs, not this thread's affinity (the worker may be pinned to
  // one while the run's threads use others): a bound, never an undercharge.
  meter.cpus_ = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  // Last: the reads above are not the run's.
  meter.monotonic_ns_ = kernels::MonotonicNs();
  meter.process_ns_ = kernels::ReadClockNs(CLOCK_PROCESS_CPUTIME_ID);
  return meter;
}

double RunCpuMeter::Seconds() const {
  std::int64_t spent = kernels::ReadClockNs(CLOCK_PROCESS_CPUTIME_ID) - process_ns_;
  for (const Other& other : others_) {
    if (const std::optional<std::int64_t> cpu = ThreadCpuNsOf(other.tid)) spent -= *cpu - other.cpu_ns;
  }
  const std::int64_t most = (kernels::MonotonicNs() - monotonic_ns_) * cpus_;
  return static_cast<double>(std::clamp<std::int64_t>(spent, 0, std::max<std::int64_t>(most, 0))) / 1e9;
}

}  // namespace numaprobe::daemon
