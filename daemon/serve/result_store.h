// SPDX-License-Identifier: Apache-2.0
// The hand-over point between the writers of the published Snapshot (the
// scheduler loop's thread, through the results model, and `serve`'s main
// thread after a reload: snapshot.h) and the HTTP threads (many readers).
//
// Thread safety: all methods are thread-safe. Readers get a shared_ptr to an
// immutable Snapshot and may keep it as long as they like.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

class ResultStore {
 public:
  ResultStore() : current_(std::make_shared<const Snapshot>()) {}

  std::shared_ptr<const Snapshot> Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }

  // Copies the current snapshot, applies `change`, and publishes the copy.
  // Writers (the loop, a reload) are serialised so no update is lost;
  // readers only wait for the pointer swap, never for `change`.
  void Update(const std::function<void(Snapshot&)>& change) {
    std::lock_guard write_lock(write_mu_);
    auto next = std::make_shared<Snapshot>(*Current());
    change(*next);
    std::lock_guard lock(mu_);
    current_ = std::move(next);
    ++publications_;
  }

  // How many snapshots have been published since construction: every event
  // of the scheduler and the results model is one (tests count them).
  std::uint64_t Publications() const {
    std::lock_guard lock(mu_);
    return publications_;
  }

 private:
  std::mutex write_mu_;
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_;
  std::uint64_t publications_ = 0;  // guarded by mu_
};

}  // namespace numaprobe::daemon
