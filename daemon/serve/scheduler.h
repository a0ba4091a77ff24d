// SPDX-License-Identifier: Apache-2.0
// The probe loop: runs the plan's probes round after round, one at a time, at
// low CPU priority, paced so that probe CPU time stays within the duty-cycle
// budget, with rounds started at a jittered interval so a fleet does not probe
// in lockstep. When a full round does not fit the budget of one interval,
// rounds rotate through the pairs (rotation.h). The first round after a
// start or a replan runs the representatives alone. While a planned series
// records its baseline the budget is the learning budget. What a run
// produced goes to the results model (results/result_model.h), which also
// keeps the scheduler's task costs and place in the rotation across restarts.
//
// The loop takes time, sleep, the host's cpuset and plan from a
// LoopEnvironment and runs probes through a ProbeExecutor: the real host and
// the SCHED_IDLE worker in the daemon, a clock and probes the test scripts in
// tests/daemon/scheduler_loop_test.cc.
//
// Thread safety: Create/Start/Stop/Reload may be called from any one control
// thread (main); the loop runs on its own thread and is the store's writer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/serve/loop_environment.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/round_tasks.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

class Scheduler {
 public:
  // Reads the topology and plans; fails naming the problem (a configured CPU
  // that is not allowed, ...). `host`: HostEnvironment(); probes run on the
  // worker thread at the configured priority.
  static kernels::Expected<std::unique_ptr<Scheduler>> Create(Config config, ResultStore& store,
                                                              std::unique_ptr<LoopEnvironment> host);
  // The same on another host and executor (tests).
  static kernels::Expected<std::unique_ptr<Scheduler>> Create(Config config, ResultStore& store,
                                                              std::unique_ptr<LoopEnvironment> env,
                                                              std::unique_ptr<ProbeExecutor> executor);
  ~Scheduler();

  // Starts the scheduling thread; "" or why it could not be created (the
  // task limit reached, named).
  std::string Start();
  // Raises the stop flag (probes notice it between samples), wakes the loop
  // and joins it; returns within about a second. False if a probe starved of
  // CPU could not be stopped and was abandoned: the caller must then exit the
  // process without destroying the Scheduler. Idempotent.
  bool Stop();
  // Hands over an already validated config; applied between two probes.
  void Reload(Config config);
  // Re-reads the state file (a `numaprobe baseline reset`) without a new
  // config: the round goes on.
  void ReloadState();

 private:
  class Loop;
  Scheduler(std::unique_ptr<Loop> loop);

  std::unique_ptr<Loop> loop_;
  std::thread thread_;
  bool finished_ = true;  // false once Run() returned after abandoning a probe
};

}  // namespace numaprobe::daemon
