// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/lock_wait_watch.h"

#include <spdlog/spdlog.h>

#include <optional>

namespace numaprobe::daemon {

void LockWaitWatch::Busy(std::int64_t now_ns) {
  meter_.Started(now_ns);
  const bool first = !busy_logged_.exchange(true);
  spdlog::log(first ? spdlog::level::info : spdlog::level::debug, "the probe lock {} is held by {}: waiting for it",
              lock_.path(), Holder());
}

void LockWaitWatch::RunStarted(std::int64_t now_ns) {
  warned_ = false;
  published_ns_ = now_ns;
}

void LockWaitWatch::Poll(std::int64_t now_ns) {
  const double waiting = meter_.CurrentSeconds(now_ns);
  if (waiting == 0) return;
  if (now_ns - published_ns_ >= 1'000'000'000) {
    published_ns_ = now_ns;
    const std::optional<ProbeLockHolder> holder = lock_.Holder();
    model_.LockWaited(meter_.TotalSeconds(now_ns), holder);
  }
  if (!warned_ && waiting >= 60) {
    warned_ = true;
    spdlog::warn(
        "probes have waited {:.0f} s for the probe lock {}, held by {}; nothing is measured until it lets go "
        "(any user who can open the file can hold it: docs/security.md)",
        waiting, lock_.path(), Holder());
  }
}

double LockWaitWatch::RunEnded(double seconds, std::int64_t end_ns) {
  meter_.Finished(seconds);
  return meter_.TotalSeconds(end_ns);
}

std::string LockWaitWatch::Holder() const {
  const std::optional<ProbeLockHolder> holder = lock_.Holder();
  return holder ? holder->Describe() : std::string("another process (not found in /proc/locks)");
}

}  // namespace numaprobe::daemon
