// SPDX-License-Identifier: Apache-2.0
// What runs the scheduler's probes. WorkerExecutor measures for real: the
// kind's kernel through a ProbeRunner, on the low-priority ProbeWorker, its
// CPU time counted. Tests script runs instead (costs, outcomes, runs that
// hang) to drive the real loop (tests/daemon/scheduler_loop_test.cc).
//
// Thread safety: called from the scheduler loop's thread only; a run itself
// may execute on another thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "daemon/config/config.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/serve/round_tasks.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// What one run produced and what it cost.
struct ProbeRun {
  RecordPtr record;
  double cpu_seconds = 0;        // everything the run cost the process (run_cpu_meter.h)
  double lock_wait_seconds = 0;  // waiting for another process's probe lock
};

class ProbeExecutor {
 public:
  virtual ~ProbeExecutor() = default;

  // A new plan (start, reload, cpuset change): later runs use this topology,
  // settings and lock. `topology` and `lock` outlive the runs (the loop owns
  // them and replaces them only between runs); `on_lock_busy` is called when
  // a run finds another process probing.
  virtual void Adopt(const kernels::Topology& topology, const Config& config, ProbeSettings settings, ProbeLock& lock,
                     std::function<void()> on_lock_busy) = 0;
  // Applied before the next run.
  virtual void SetPriority(ProbePriority priority) = 0;

  // Starts one run; the previous must have finished. `ends_visit`: free the
  // visit's buffers after it, as part of its cost. The run ends early, as
  // kCancelled, once `stop` is raised (if it gets the CPU to notice).
  virtual void Start(const Task& task, bool ends_visit, const std::atomic<bool>* stop) = 0;
  // Waits up to `timeout`; true once the run has finished.
  virtual bool Wait(std::chrono::milliseconds timeout) = 0;
  // The finished run (after Wait returned true).
  virtual ProbeRun Result() = 0;
  // Gives up on an unfinished run at shutdown: it may go on after the loop
  // has returned (the process is exiting).
  virtual void Abandon() = 0;
  // Frees prepared buffers after a round cut short mid-visit; not during a run.
  virtual void ReleaseBuffers() = 0;
};

std::unique_ptr<ProbeExecutor> WorkerExecutor(ProbePriority priority);

}  // namespace numaprobe::daemon
