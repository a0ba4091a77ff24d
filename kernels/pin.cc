// SPDX-License-Identifier: Apache-2.0
#include "kernels/pin.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cstring>
#include <memory>

namespace numaprobe::kernels {
namespace {

// Far above any real CPU id, but bounds the mask we allocate for a bogus one.
constexpr int kMaxCpuId = 1 << 16;

std::string CpuReason(int cpu, const std::string& what) { return "cpu " + std::to_string(cpu) + ": " + what; }

}  // namespace

std::string PinCurrentThread(int cpu) {
  if (cpu < 0 || cpu >= kMaxCpuId) return CpuReason(cpu, "no such cpu id");
  // A dynamically sized set, so ids beyond CPU_SETSIZE (1024) reach the kernel
  // and are judged by it rather than silently dropped by CPU_SET.
  const std::size_t set_bytes = CPU_ALLOC_SIZE(cpu + 1);
  std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(cpu + 1), [](cpu_set_t* s) { CPU_FREE(s); });
  if (set == nullptr) return CpuReason(cpu, "CPU_ALLOC failed");
  CPU_ZERO_S(set_bytes, set.get());
  CPU_SET_S(static_cast<std::size_t>(cpu), set_bytes, set.get());
  // pthread_setaffinity_np returns the error number instead of setting errno.
  const int err = pthread_setaffinity_np(pthread_self(), set_bytes, set.get());
  if (err != 0) return CpuReason(cpu, std::string("sched_setaffinity: ") + std::strerror(err));
  // The kernel migrates the caller before returning; one yield covers a
  // hypervisor or scheduler that completes the move a moment later.
  if (sched_getcpu() != cpu) sched_yield();
  const int now = sched_getcpu();
  if (now != cpu) {
    return CpuReason(cpu, "still running on cpu " + std::to_string(now) + " after pinning");
  }
  return "";
}

ThreadSchedState ReadThreadSchedState() {
  ThreadSchedState state;
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) == 0) {
    state.voluntary_switches = static_cast<std::uint64_t>(usage.ru_nvcsw);
    state.involuntary_switches = static_cast<std::uint64_t>(usage.ru_nivcsw);
  }
  state.cpu = sched_getcpu();
  return state;
}

bool SampleGuard::Clean(Discards& discards) const {
  const ThreadSchedState now = ReadThreadSchedState();
  if (now.voluntary_switches != start_.voluntary_switches || now.involuntary_switches != start_.involuntary_switches) {
    ++discards.context_switch;
    return false;
  }
  if (now.cpu != start_.cpu) {
    ++discards.migration;
    return false;
  }
  return true;
}

}  // namespace numaprobe::kernels
