// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/password_checks.h"

#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "daemon/common/task_limits.h"
#include "daemon/web/family_builder.h"
#include "kernels/thread_start.h"

namespace numaprobe::daemon {

void PasswordChecks::Work(const std::shared_ptr<State>& state) {
  std::unique_lock lock(state->mutex);
  while (true) {
    state->wake.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    if (state->stopping) return;
    Job job = std::move(state->queue.front());
    state->queue.pop_front();
    state->busy = true;
    state->running_done = std::move(job.done);
    lock.unlock();
    const bool allowed = job.check.Run();
    lock.lock();
    state->busy = false;
    // Stop took the `done` away: the server is gone, nobody is told.
    if (state->stopping) return;
    std::function<void(bool)> done = std::move(state->running_done);
    state->running_done = nullptr;
    ++state->delivering;
    lock.unlock();
    done(allowed);
    done = nullptr;  // its captures go here, not under the lock
    lock.lock();
    if (--state->delivering == 0) state->delivered.notify_all();
  }
}

bool PasswordChecks::Submit(PasswordCheck check, std::function<void(bool)> done) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopping) return false;
    if (state_->queue.size() >= max_queued_) {
      Refused(nullptr);
      return false;
    }
  }
  {
    std::lock_guard lock(thread_mutex_);
    if (!thread_.joinable()) {
      {
        // Again, under thread_mutex_: a Stop that ran since must not be
        // followed by a thread it never joins.
        std::lock_guard state_lock(state_->mutex);
        if (state_->stopping) return false;
      }
      auto started = kernels::StartThread("password check", [state = state_] { Work(state); });
      if (!started.ok()) {
        Refused((started.failure().reason + " (" + DescribeTaskLimits() + ")").c_str());
        return false;
      }
      thread_ = std::move(started).value();
    }
  }
  std::lock_guard lock(state_->mutex);
  if (state_->stopping) return false;
  state_->queue.push_back(Job{std::move(check), std::move(done)});
  state_->wake.notify_one();
  return true;
}

void PasswordChecks::Refused(const char* why) {
  refused_.fetch_add(1);
  if (!logged_.Allow()) return;
  if (why != nullptr) {
    spdlog::warn("http: {}: requests that need a password check get 503 (logged at most once a minute)", why);
  } else {
    spdlog::warn(
        "http: {} password checks (bcrypt) are waiting, the limit: requests that need one get 503 until they are "
        "done (logged at most once a minute; numaprobe_http_password_checks_refused_total counts them)",
        max_queued_);
  }
}

void PasswordChecks::Stop() {
  std::deque<Job> dropped;
  std::function<void(bool)> running;
  bool busy = false;
  {
    std::unique_lock lock(state_->mutex);
    if (state_->stopping) return;
    state_->stopping = true;
    dropped.swap(state_->queue);
    running = std::move(state_->running_done);
    state_->running_done = nullptr;
    busy = state_->busy;
    state_->wake.notify_all();
    // A `done` being called posts to the event loop and returns: short.
    state_->delivered.wait(lock, [&] { return state_->delivering == 0; });
  }
  // `dropped` and `running` (their connections) go here, on this thread.
  std::lock_guard lock(thread_mutex_);
  if (!thread_.joinable()) return;
  if (busy) {
    // Inside bcrypt, which cannot be interrupted: it finishes on its own
    // (State outlives it) and finds nobody to tell.
    thread_.detach();
  } else {
    thread_.join();
  }
}

prometheus::MetricFamily PasswordChecks::Family() const {
  FamilyBuilder family("numaprobe_http_password_checks_refused_total",
                       "Requests answered 503 because the password checks (bcrypt) waiting had reached the limit "
                       "of " +
                           std::to_string(max_queued_) + " (or the checking thread could not be created).",
                       prometheus::MetricType::Counter);
  family.Add({}, static_cast<double>(refused_.load()));
  return family.Build();
}

}  // namespace numaprobe::daemon
