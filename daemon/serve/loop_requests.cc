// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/loop_requests.h"

#include <utility>

namespace numaprobe::daemon {

void LoopRequests::RequestStop() {
  stop_.store(true);
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void LoopRequests::RequestStateReload() {
  reload_state_.store(true);
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void LoopRequests::RequestReload(Config config) {
  std::lock_guard lock(mu_);
  pending_ = std::move(config);
  cv_.notify_all();
}

bool LoopRequests::ConfigPending() {
  std::lock_guard lock(mu_);
  return pending_.has_value();
}

std::optional<Config> LoopRequests::TakeConfig() {
  std::optional<Config> next;
  std::lock_guard lock(mu_);
  next.swap(pending_);
  return next;
}

void LoopRequests::Sleep(LoopEnvironment& env, std::int64_t ns) {
  std::unique_lock lock(mu_);
  env.Sleep(lock, cv_, ns, [&] { return stop_.load() || pending_.has_value() || reload_state_.load(); });
}

}  // namespace numaprobe::daemon
