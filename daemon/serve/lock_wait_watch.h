// SPDX-License-Identifier: Apache-2.0
// What the daemon says while its probes wait for the probe lock another
// process holds (a second daemon, a benchmark run by hand, a hostile user:
// docs/security.md): the first wait is logged once at info, later ones at
// debug (a second daemon makes waiting routine); during a wait the total
// (LockWaitMeter) and the holder are published every second, and one warning
// is logged per run once it has waited a minute (a stuck holder stops every
// probe while the watchdog rightly stays fed: the daemon is not hung).
//
// Thread safety: Busy() on the probe worker thread (while the loop waits for
// the run); everything else on the scheduler loop thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "daemon/probing/probe_lock.h"
#include "daemon/serve/lock_wait_meter.h"
#include "daemon/serve/results/result_model.h"

namespace numaprobe::daemon {

class LockWaitWatch {
 public:
  // `lock`: the loop's probe lock, which a reload may replace in place
  // between runs; `model`: where waits are published. Both outlive this.
  LockWaitWatch(const ProbeLock& lock, ResultModel& model) : lock_(lock), model_(model) {}

  // On the worker thread: a probe found the lock held at `now_ns` and waits.
  void Busy(std::int64_t now_ns);
  // A run starts at `now_ns`: its wait is published from then, and warned
  // about once.
  void RunStarted(std::int64_t now_ns);
  // While the run goes on (the loop polls it): publishes and warns as above.
  void Poll(std::int64_t now_ns);
  // The run ended at `end_ns` having waited `seconds` as the lock measured
  // it: the total wait since start, published with the run (LoopFacts).
  double RunEnded(double seconds, std::int64_t end_ns);

 private:
  // Who holds the probe lock, for the log: a pid and a uid, or why not.
  std::string Holder() const;

  const ProbeLock& lock_;
  ResultModel& model_;
  LockWaitMeter meter_;
  std::atomic<bool> busy_logged_{false};
  // Of the run under way.
  bool warned_ = false;
  std::int64_t published_ns_ = 0;
};

}  // namespace numaprobe::daemon
