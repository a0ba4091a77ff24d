// SPDX-License-Identifier: Apache-2.0
// What the control thread (main: signals, systemd) asks of the scheduler
// loop, and the sleep that hears it: stop (Scheduler::Stop), a new validated
// configuration (Scheduler::Reload), a look at the state directory
// (Scheduler::ReloadState). The loop sleeps only here, so every request wakes
// it at once instead of after its interval or a budget's pause.
//
// Thread safety: Request*() from any thread; everything else on the loop
// thread. This is the only state the two threads share besides the store.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

#include "daemon/config/config.h"
#include "daemon/serve/loop_environment.h"

namespace numaprobe::daemon {

class LoopRequests {
 public:
  void RequestStop();
  // An unchanged config on SIGHUP: only the state directory is looked at (how
  // `numaprobe baseline accept` and `reset` reach the daemon).
  void RequestStateReload();
  void RequestReload(Config config);

  bool stopping() const { return stop_.load(); }
  // The stop flag itself, for a run to notice between samples.
  const std::atomic<bool>* stop_flag() const { return &stop_; }
  // Whether a state reload was asked since the last call.
  bool TakeStateReload() { return reload_state_.exchange(false); }
  bool ConfigPending();
  // The configuration a reload handed over, if one is pending.
  std::optional<Config> TakeConfig();

  // Sleeps up to `ns` on `env`'s clock, waking early at any request.
  void Sleep(LoopEnvironment& env, std::int64_t ns);

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> reload_state_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Config> pending_;  // guarded by mu_
};

}  // namespace numaprobe::daemon
