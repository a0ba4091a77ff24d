// SPDX-License-Identifier: Apache-2.0
// The CPU one probe run costs the process: every thread the run used, each
// over its whole life (the worker's buffer preparation and release, and the
// kernels' measuring threads from their creation to their exit: a start gate
// waited at, a partner thread's spin, the work after their own clocks stop),
// and nothing of the threads that merely go on meanwhile (HTTP, the scheduler
// loop, main). What the kernels report of their own threads (a record's
// cpu_seconds) begins after their start gate; this is what the budget is
// charged (probe_executor.cc).
//
// How: the process's CPU clock (which keeps the CPU of threads that exited)
// over the run, less what every other thread that existed at the start spent
// meanwhile (each read through its own CPU clock). A thread that exits during
// the run without being the run's is charged to it (none of the daemon's long
// lived threads does); without /proc/self/task every thread is (the charge is
// then too high, never too low). A charge is never more than the run's
// monotonic duration times the CPUs the process may use: a CPU clock that
// jumped (libfaketime fakes the process CPU clock when it moves the wall
// clock; a broken clocksource) must not charge a pause of days.
//
// Thread safety: Start and Seconds on the thread that runs the probe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace numaprobe::daemon {

class RunCpuMeter {
 public:
  // Before the run, on the thread that runs it. `task_dir` lists the
  // process's threads (a test names a missing one: the fallback).
  static RunCpuMeter Start(const char* task_dir = "/proc/self/task");
  // CPU-seconds the run has cost since Start, on the same thread.
  double Seconds() const;

 private:
  struct Other {
    pid_t tid;
    std::int64_t cpu_ns;
  };
  std::int64_t process_ns_ = 0;
  std::int64_t monotonic_ns_ = 0;
  int cpus_ = 1;               // online CPUs at Start
  std::vector<Other> others_;  // every other thread at Start, with its CPU then
};

}  // namespace numaprobe::daemon
