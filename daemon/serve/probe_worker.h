// SPDX-License-Identifier: Apache-2.0
// The thread probes run on, at lowered CPU priority (SCHED_IDLE or nice 19),
// one job at a time.
//
// Probes are meant to yield to the host's work, so on a saturated host they
// may not run for minutes. Keeping them off the scheduler loop's thread lets
// the loop (normal priority) keep answering stop requests and the systemd
// watchdog meanwhile; at shutdown a probe that cannot finish in time is
// abandoned rather than waited for.
//
// Thread safety: Submit, Wait and SetPriority are called from one owner
// thread; jobs run on the worker thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/config/config.h"

namespace numaprobe::daemon {

class ProbeWorker {
 public:
  explicit ProbeWorker(ProbePriority priority);
  // Joins the thread, unless a job was abandoned (then it is detached: the
  // process is exiting and must not wait for it).
  ~ProbeWorker();
  ProbeWorker(const ProbeWorker&) = delete;
  ProbeWorker& operator=(const ProbeWorker&) = delete;

  // Applied on the worker thread before its next job.
  void SetPriority(ProbePriority priority);
  // Starts `job` on the worker thread, creating the thread on first use (and
  // again after a failure); "" or why it cannot be created (a task limit):
  // the job is then not run. The previous job must have finished.
  std::string Submit(std::function<void()> job);
  // Waits up to `timeout` for the current job; true once it has finished.
  bool Wait(std::chrono::milliseconds timeout);
  // Gives up on an unfinished job at shutdown (see the destructor).
  void Abandon() { abandoned_ = true; }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;   // guarded by mu_; empty when idle
  bool busy_ = false;           // guarded by mu_
  bool quit_ = false;           // guarded by mu_
  ProbePriority priority_;      // guarded by mu_
  bool priority_dirty_ = true;  // guarded by mu_
  bool abandoned_ = false;      // owner thread only
  std::thread thread_;          // owner thread only; not joinable until the first Submit
};

// Lowers the calling thread's priority; "" or what failed. Threads the kernels
// start from it inherit the policy.
std::string ApplyPriority(ProbePriority priority);

}  // namespace numaprobe::daemon
