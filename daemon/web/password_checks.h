// SPDX-License-Identifier: Apache-2.0
// Where bcrypt runs: one thread of its own and a queue of at most kQueued
// checks, never the HTTP threads. bcrypt is slow on purpose (50-140 ms at cost
// 10 on the development machine, docs/security.md): on the two threads that
// serve every connection, 40 clients sending wrong passwords held a scrape
// for 14 s. Here they wait in the queue, the HTTP threads go on serving, and
// a scraper whose credentials were verified before (BasicAuth's memory of
// them) never queues at all.
//
// Past kQueued waiting checks a request that needs one is refused at once
// with 503 (http_reply.h), counted in
// numaprobe_http_password_checks_refused_total and logged at most once a
// minute. Stop never waits for a check in progress: SIGTERM does not wait on
// bcrypt, whatever its cost.
//
// Thread safety: Submit, refused and Family may run on any thread; Stop once,
// from the thread that owns the server, after its event loop has stopped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <prometheus/metric_family.h>

#include "daemon/web/log_limiter.h"
#include "daemon/web/web_security.h"

namespace numaprobe::daemon {

class PasswordChecks {
 public:
  // 8: at cost 12 (kMaxBcryptCost) a full queue is about 2-4 s of checks, so
  // a scraper's first check still fits Prometheus' 10 s scrape timeout.
  static constexpr std::size_t kQueued = 8;

  explicit PasswordChecks(std::size_t max_queued = kQueued) : max_queued_(max_queued) {}
  ~PasswordChecks() { Stop(); }
  PasswordChecks(const PasswordChecks&) = delete;
  PasswordChecks& operator=(const PasswordChecks&) = delete;

  // Queues `check`; `done` gets its result on the checking thread (it should
  // post to the connection's executor and return). False, and `done` never
  // runs, when the queue is full or the thread cannot be created (counted and
  // logged).
  bool Submit(PasswordCheck check, std::function<void(bool)> done);

  // Drops the queued checks and every pending `done` (on this thread), lets
  // the thread finish its check in the background if one is running, and
  // returns without waiting for it. Idempotent.
  void Stop();

  std::uint64_t refused() const { return refused_.load(); }
  // numaprobe_http_password_checks_refused_total.
  prometheus::MetricFamily Family() const;

 private:
  struct Job {
    PasswordCheck check;
    std::function<void(bool)> done;
  };
  // What the thread uses, kept alive by it even after a Stop that did not wait.
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Job> queue;
    bool stopping = false;
    bool busy = false;                       // the thread is inside a check
    std::function<void(bool)> running_done;  // the `done` of that check
    int delivering = 0;                      // `done` calls under way
    std::condition_variable delivered;
  };
  static void Work(const std::shared_ptr<State>& state);
  void Refused(const char* why);

  const std::size_t max_queued_;
  const std::shared_ptr<State> state_ = std::make_shared<State>();
  std::mutex thread_mutex_;
  std::thread thread_;  // started at the first check
  std::atomic<std::uint64_t> refused_{0};
  LogLimiter logged_;
};

}  // namespace numaprobe::daemon
