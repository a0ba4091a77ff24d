// SPDX-License-Identifier: Apache-2.0
// At most one log line a minute for a problem that can recur many times a
// second (failed accepts while descriptors run out, failed TLS handshakes
// from a scanner): the journal keeps the first occurrence and stays readable.
// A counter metric carries the exact number.
//
// Thread safety: Allow may run on any number of threads at once.
#pragma once

#include <atomic>
#include <chrono>

namespace numaprobe::daemon {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // True when a line may be logged now (the first call, then once a minute).
  bool Allow() {
    const Clock::time_point now = Clock::now();
    Clock::time_point last = last_.load();
    while (last == Clock::time_point{} || now - last >= std::chrono::minutes(1)) {
      if (last_.compare_exchange_weak(last, now)) return true;
    }
    return false;
  }

 private:
  std::atomic<Clock::time_point> last_{};  // {}: never
};

}  // namespace numaprobe::daemon
