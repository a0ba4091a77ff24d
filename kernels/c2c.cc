// SPDX-License-Identifier: Apache-2.0
#include "kernels/c2c.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "kernels/arena.h"
#include "kernels/clock.h"
#include "kernels/pin.h"
#include "kernels/spin_hint.h"
#include "kernels/stats.h"
#include "kernels/thread_start.h"
#include "kernels/timer_resolution.h"

namespace numaprobe::kernels {
namespace {

// Spins between looks at the clock and abort flags: a line transfer takes tens
// of spins, so healthy waits never read the clock; stuck ones notice in µs.
constexpr unsigned kCheckEvery = 256;

enum class Wait { kDone, kSampleTimeout, kAbortSample, kQuit };

void SlowPoll() { std::this_thread::sleep_for(std::chrono::microseconds(100)); }

// The ping-pong, with plain acquire loads and release stores rather than CAS:
// A only ever writes odd values after seeing an even one and B the reverse, so
// there is never a write race to arbitrate. Each one-way trip is then B's load
// miss on the line A modified (the cross-core transfer) plus the upgrade of
// B's copy when it stores, as in multichase pingpong -u.
//
// Per-sample handshake (the control words live outside the measured line):
//   A: line = 0; a_word = s << 1             "sample s starts"
//   B: b_word = 2s - 1                       "ready": A starts the clock
//   ... round trips: A waits for 2k, stores 2k+1; B waits for 2k+1, stores 2k+2
//   A: on a sample timeout, a_word = (s << 1) | 1: B leaves the round trips
//   B: b_word = 2s                           "done": A may reset the line
// A touches the line only between B's "done" of s-1 and its announcement of s,
// so a late store from B can never corrupt the next sample.
class PingPong {
 public:
  PingPong(const C2cSpec& spec, std::atomic<std::uint64_t>* line, C2cResult& result)
      : spec_(spec), line_(line), result_(result) {}

  void Run() {
    total_deadline_ = MonotonicNs() + std::chrono::nanoseconds(spec_.total_timeout).count();
    // Neither thread starts before both exist (see StartGate).
    std::thread a;
    std::thread b;
    try {
      a = std::thread([this] { RunA(); });
      b = std::thread([this] { RunB(); });
      gate_.store(StartGate::kOpen, std::memory_order_release);
    } catch (const std::system_error& e) {
      gate_.store(StartGate::kAbandoned, std::memory_order_release);
      Fail(Outcome::kThreadLimit,
           std::string("cannot create ping-pong thread ") + (a.joinable() ? "2" : "1") + " of 2: " + e.what());
    }
    if (a.joinable()) a.join();
    if (b.joinable()) b.join();
    result_.cpu_seconds = static_cast<double>(a_cpu_ns_ + b_cpu_ns_) * 1e-9;
    result_.clock = timer_.report();
    if (result_.outcome != Outcome::kOk) return;
    if (std::optional<Failure> coarse =
            timer_.Verdict("cpus " + std::to_string(spec_.cpu_a) + " and " + std::to_string(spec_.cpu_b))) {
      return Fail(coarse->outcome, std::move(coarse->reason));
    }
    result_.one_way_seconds = Summarize(one_way_);
  }

 private:
  std::uint64_t R() const { return static_cast<std::uint64_t>(spec_.round_trips); }
  bool Stopped() const { return spec_.stop != nullptr && spec_.stop->load(std::memory_order_relaxed); }
  std::int64_t SampleNs() const { return std::chrono::nanoseconds(spec_.sample_timeout).count(); }

  void Fail(Outcome outcome, std::string reason) {
    result_.outcome = outcome;
    result_.reason = std::move(reason);
  }
  std::string NoAnswer() const {
    return "cpu " + std::to_string(spec_.cpu_b) + " did not answer within " +
           std::to_string(spec_.total_timeout.count()) + " ms (" + std::to_string(one_way_.size()) + " of " +
           std::to_string(spec_.samples) + " samples done)";
  }

  // A's wait: gives up on the sample at sample_deadline (0: never), and on the
  // whole run at the total deadline or when the caller's stop flag rises.
  template <class Pred>
  Wait AWait(Pred done, std::int64_t sample_deadline) {
    for (unsigned spins = 1; !done(); ++spins) {
      SpinHint();
      if (spins % kCheckEvery != 0) continue;
      const std::int64_t now = MonotonicNs();
      if (Stopped()) {
        Fail(Outcome::kCancelled, "stop requested");
        return Wait::kQuit;
      }
      if (now > total_deadline_) {
        Fail(Outcome::kTimeout, NoAnswer());
        return Wait::kQuit;
      }
      if (sample_deadline != 0 && now > sample_deadline) return Wait::kSampleTimeout;
      if (sample_deadline == 0 && spins > kCheckEvery * 64) SlowPoll();
    }
    return Wait::kDone;
  }

  // B's wait: leaves when A quits, when A aborts `sample` (0: none) or at the
  // total deadline; after a sample_timeout without progress it polls slowly,
  // so a descheduled A does not make B burn its CPU.
  template <class Pred>
  Wait BWait(Pred done, std::uint64_t sample) {
    const std::int64_t slow_after = MonotonicNs() + SampleNs();
    for (unsigned spins = 1; !done(); ++spins) {
      SpinHint();
      if (spins % kCheckEvery != 0) continue;
      if (quit_.load(std::memory_order_acquire)) return Wait::kQuit;
      if (sample != 0 && a_word_.load(std::memory_order_acquire) == ((sample << 1) | 1)) {
        return Wait::kAbortSample;
      }
      const std::int64_t now = MonotonicNs();
      if (now > total_deadline_) return Wait::kQuit;
      if (now > slow_after) SlowPoll();
    }
    return Wait::kDone;
  }

  void RunA() {
    if (!AwaitStartGate(gate_)) return;
    const std::int64_t cpu_start = ThreadCpuNs();
    if (std::string error = PinCurrentThread(spec_.cpu_a); !error.empty()) {
      Fail(Outcome::kPinFailed, std::move(error));
    } else if (AWait([this] { return b_started_.load(std::memory_order_acquire) != 0; }, 0) == Wait::kDone) {
      if (!b_pin_error_.empty()) {
        Fail(Outcome::kPinFailed, b_pin_error_);
      } else {
        Samples();
      }
    }
    quit_.store(true, std::memory_order_release);
    a_cpu_ns_ = ThreadCpuNs() - cpu_start;
  }

  // Sample 1 is the warm-up (caches, TLB, frequency) and never counts.
  void Samples() {
    const int max_attempts = spec_.max_attempts > 0 ? spec_.max_attempts : 3 * spec_.samples;
    const std::string of_wanted = " of " + std::to_string(spec_.samples) + " samples";
    int attempts = 0;
    for (std::uint64_t s = 1; one_way_.size() < static_cast<std::size_t>(spec_.samples); ++s) {
      const std::string done = std::to_string(one_way_.size()) + of_wanted;
      if (Stopped()) {
        Fail(Outcome::kCancelled, "stop requested after " + done);
      } else if (MonotonicNs() > total_deadline_) {
        Fail(Outcome::kTimeout, "run exceeded " + std::to_string(spec_.total_timeout.count()) + " ms with " + done);
      } else if (attempts >= max_attempts) {
        const Discards& d = result_.discards;
        Fail(Outcome::kDisturbed, done + " clean after " + std::to_string(attempts) + " attempts (context switch " +
                                      std::to_string(d.context_switch) + ", migration " + std::to_string(d.migration) +
                                      ", timeout " + std::to_string(d.timeout) + ")");
      } else if (SampleA(s, s == 1)) {
        if (s > 1) ++attempts;
        continue;
      }
      return;
    }
  }

  // Runs sample s on A's side; false when the whole run must stop.
  bool SampleA(std::uint64_t s, bool warmup) {
    SampleGuard guard;
    guard.Begin();
    line_->store(0, std::memory_order_relaxed);  // B is idle (done with s-1)
    const std::int64_t deadline = MonotonicNs() + SampleNs();
    a_word_.store(s << 1, std::memory_order_release);
    Wait w = AWait([&] { return b_word_.load(std::memory_order_acquire) >= 2 * s - 1; }, deadline);
    std::int64_t t0 = SampleClockNs();
    for (std::uint64_t k = 0; w == Wait::kDone && k < R(); ++k) {
      w = AWait([&] { return line_->load(std::memory_order_acquire) == 2 * k; }, deadline);
      if (w == Wait::kDone) line_->store(2 * k + 1, std::memory_order_release);
      // Healthy waits end before AWait looks at the clock, so a sample that is
      // merely too long is caught here (one clock read per ~0.1 ms).
      if (k % kCheckEvery == kCheckEvery - 1 && MonotonicNs() > deadline) w = Wait::kSampleTimeout;
    }
    if (w == Wait::kDone) w = AWait([&] { return line_->load(std::memory_order_acquire) == 2 * R(); }, deadline);
    const std::int64_t elapsed = SampleClockNs() - t0;
    if (w == Wait::kQuit) return false;
    if (w == Wait::kSampleTimeout) a_word_.store((s << 1) | 1, std::memory_order_release);
    // Whatever happened, B must be done with s before the line is reused.
    if (AWait([&] { return b_word_.load(std::memory_order_acquire) >= 2 * s; }, 0) == Wait::kQuit) {
      return false;
    }
    Discards why_a;
    const bool clean_a = guard.Clean(why_a);
    if (warmup) return true;
    if (w == Wait::kSampleTimeout) {
      ++result_.discards.timeout;
    } else if (!clean_a) {
      result_.discards += why_a;  // one reason per discarded sample
    } else if (!b_clean_) {
      result_.discards += b_why_;
    } else {
      timer_.Accept(elapsed);
      one_way_.push_back(static_cast<double>(elapsed) * 1e-9 / static_cast<double>(2 * R()));
    }
    return true;
  }

  void RunB() {
    if (!AwaitStartGate(gate_)) return;
    const std::int64_t cpu_start = ThreadCpuNs();
    b_pin_error_ = PinCurrentThread(spec_.cpu_b);
    b_started_.store(b_pin_error_.empty() ? 1 : 2, std::memory_order_release);
    SampleGuard guard;
    for (std::uint64_t s = 1; b_pin_error_.empty(); ++s) {
      std::uint64_t a = 0;
      if (BWait([&] { return ((a = a_word_.load(std::memory_order_acquire)) >> 1) >= s; }, 0) != Wait::kDone) {
        break;
      }
      guard.Begin();
      Wait w = (a & 1) != 0 ? Wait::kAbortSample : Wait::kDone;  // aborted before B got here
      if (w == Wait::kDone) b_word_.store(2 * s - 1, std::memory_order_release);
      for (std::uint64_t k = 0; w == Wait::kDone && k < R(); ++k) {
        w = BWait([&] { return line_->load(std::memory_order_acquire) == 2 * k + 1; }, s);
        if (w == Wait::kDone) line_->store(2 * k + 2, std::memory_order_release);
      }
      if (w == Wait::kQuit) break;
      Discards why;
      b_clean_ = guard.Clean(why);
      b_why_ = why;
      b_word_.store(2 * s, std::memory_order_release);  // publishes b_clean_, b_why_
    }
    b_cpu_ns_ = ThreadCpuNs() - cpu_start;
  }

  const C2cSpec& spec_;
  std::atomic<std::uint64_t>* const line_;
  C2cResult& result_;
  std::int64_t total_deadline_ = 0;
  std::atomic<StartGate> gate_{StartGate::kClosed};
  // Control words, each on its own pair of lines (the adjacent-line prefetcher
  // works on 128-byte pairs) so that they never share the measured line.
  alignas(128) std::atomic<std::uint64_t> a_word_{0};  // written by A
  alignas(128) std::atomic<std::uint64_t> b_word_{0};  // written by B
  alignas(128) std::atomic<int> b_started_{0};         // B: 1 pinned, 2 pin failed
  std::atomic<bool> quit_{false};                      // A -> B: leave now
  // B's per-sample verdict, published by b_word_ (release) / b_started_.
  std::string b_pin_error_;
  bool b_clean_ = true;
  Discards b_why_;
  std::int64_t a_cpu_ns_ = 0;  // each thread's CPU time, read after join
  std::int64_t b_cpu_ns_ = 0;
  std::vector<double> one_way_;                                // A only
  TimerCheck timer_ = TimerCheck::Start(spec_.clock_step_ns);  // A only after the start
};

std::string Validate(const C2cSpec& spec) {
  if (spec.cpu_a < 0 || spec.cpu_b < 0) {
    return "cpu ids must be >= 0 (got " + std::to_string(spec.cpu_a) + ", " + std::to_string(spec.cpu_b) + ")";
  }
  if (spec.cpu_a == spec.cpu_b) return "cpu_a and cpu_b are both cpu " + std::to_string(spec.cpu_a);
  if (spec.samples < 1 || spec.round_trips < 1) return "samples and round_trips must be >= 1";
  if (spec.max_attempts != 0 && spec.max_attempts < spec.samples) return "max_attempts must be >= samples";
  if (spec.sample_timeout.count() <= 0 || spec.total_timeout.count() <= 0) return "timeouts must be > 0";
  return {};
}

C2cResult Failed(C2cResult result, const Failure& failure) {
  result.outcome = failure.outcome;
  result.reason = failure.reason;
  return result;
}

}  // namespace

C2cResult MeasureCoreToCore(const C2cSpec& spec) {
  C2cResult result;
  result.cpu_a = spec.cpu_a;
  result.cpu_b = spec.cpu_b;
  result.round_trips = spec.round_trips;
  if (std::string why = Validate(spec); !why.empty()) return Failed(result, {Outcome::kInvalidSpec, why});
  // A page of its own, bound to line_node and verified by Arena: where the line
  // is homed changes the result up to 2x, so it is a label, never an accident
  // of which thread touched it first.
  Expected<Arena> page = Arena::Create(ArenaSpec{4096, spec.line_node, PagePolicy::kSmall});
  if (!page) return Failed(result, page.failure());
  result.line = page->info();
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
  auto* line = new (page->data()) std::atomic<std::uint64_t>(0);
  PingPong(spec, line, result).Run();
  return result;
}

}  // namespace numaprobe::kernels
