// SPDX-License-Identifier: Apache-2.0
// The running total behind numaprobe_probe_lock_wait_seconds_total, kept live
// while a wait is still going on: a lock another process holds for an hour
// shows within a second, not when the hour is over.
//
// Thread safety: Started() on the probe worker thread; everything else on the
// scheduler loop thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace numaprobe::daemon {

class LockWaitMeter {
 public:
  // A probe found the lock taken at `now_ns` (monotonic) and waits.
  void Started(std::int64_t now_ns) { started_ns_.store(now_ns); }

  // How long the wait in progress has lasted; 0 when none.
  double CurrentSeconds(std::int64_t now_ns) const {
    const std::int64_t started = started_ns_.load();
    return started == 0 ? 0 : static_cast<double>(now_ns - started) / 1e9;
  }

  // The total to publish: finished waits plus the one in progress.
  double TotalSeconds(std::int64_t now_ns) {
    published_ = std::max(published_, finished_ + CurrentSeconds(now_ns));
    return published_;
  }

  // The probe ended, having waited `seconds` as the lock measured it. Never
  // lets the total go back below what was published while it ran: a counter
  // that decreases reads as a restart to Prometheus.
  void Finished(double seconds) {
    started_ns_.store(0);
    finished_ = std::max(finished_ + seconds, published_);
    published_ = finished_;
  }

 private:
  std::atomic<std::int64_t> started_ns_{0};
  double finished_ = 0;
  double published_ = 0;
};

}  // namespace numaprobe::daemon
