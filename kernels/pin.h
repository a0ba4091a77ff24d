// SPDX-License-Identifier: Apache-2.0
// Pinning a thread to one CPU, and noticing when the scheduler disturbed a
// sample anyway (context switch or migration): such samples are discarded.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/result.h"

namespace numaprobe::kernels {

// Pins the calling thread to `cpu` and confirms with sched_getcpu(). Returns an
// empty string on success, else the reason ("cpu 7: sched_setaffinity: Invalid argument").
std::string PinCurrentThread(int cpu);

// Snapshot of what the scheduler did to the calling thread.
struct ThreadSchedState {
  std::uint64_t voluntary_switches = 0;
  std::uint64_t involuntary_switches = 0;
  int cpu = -1;
};
ThreadSchedState ReadThreadSchedState();

// Brackets one sample: Begin() before timing, then Check() after it says whether
// the sample is clean or why it must be discarded (counting it in `discards`).
class SampleGuard {
 public:
  void Begin() { start_ = ReadThreadSchedState(); }
  bool Clean(Discards& discards) const;

 private:
  ThreadSchedState start_;
};

}  // namespace numaprobe::kernels
