// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/bandwidth.cc: the multi-threaded burst engine.
#include "kernels/bandwidth_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/bandwidth_loops.h"
#include "kernels/bandwidth_paced.h"
#include "kernels/clock.h"
#include "kernels/pin.h"
#include "kernels/spin_hint.h"
#include "kernels/stats.h"
#include "kernels/thread_start.h"
#include "kernels/timer_resolution.h"

namespace numaprobe::kernels {
namespace {

// Everything one worker thread owns. Written by the worker before it arrives
// at the barrier (release), read by the leader after seeing the arrival
// (acquire); the slice is written by the leader before it releases a burst.
struct alignas(64) Slot {
  std::atomic<std::uint64_t> arrived{0};  // last barrier generation reached
  std::string pin_error;
  std::int64_t end_ns = 0;
  bool clean = true;
  Discards why_unclean;
  std::int64_t cpu_ns = 0;
  std::size_t src = 0;
  std::size_t dst = 0;
  std::size_t bytes = 0;
};

// Runs warm-up plus timed bursts on one pinned thread per CPU. Thread 0 is the
// leader: at every barrier it judges the burst just finished and plans the
// next one, so the calling thread only blocks in join() and never competes
// with the workers for their CPUs.
class BurstRun {
 public:
  BurstRun(BandwidthBuffer& buffer, const BandwidthRunSpec& spec, BandwidthResult& result)
      : buffer_(buffer), spec_(spec), result_(result), loops_(LoopsFor(result.isa)), slots_(spec.cpus.size()) {}

  void Run() {
    std::vector<std::thread> threads;
    threads.reserve(slots_.size());
    // Nobody starts before every thread exists: if creating one fails, the
    // others must not be left waiting at a barrier for it.
    try {
      for (std::size_t t = 0; t < slots_.size(); ++t) threads.emplace_back([this, t] { Work(t); });
      gate_.store(StartGate::kOpen, std::memory_order_release);
    } catch (const std::system_error& e) {
      gate_.store(StartGate::kAbandoned, std::memory_order_release);
      result_.outcome = Outcome::kThreadLimit;
      result_.reason = "cannot create measuring thread " + std::to_string(threads.size() + 1) + " of " +
                       std::to_string(slots_.size()) + ": " + e.what();
    }
    for (std::thread& thread : threads) thread.join();
    for (const Slot& slot : slots_) result_.cpu_seconds += static_cast<double>(slot.cpu_ns) * 1e-9;
    result_.clock = timer_.report();
    if (result_.outcome == Outcome::kOk) {
      if (std::optional<Failure> coarse = timer_.Verdict("cpu " + std::to_string(spec_.cpus.front()))) {
        result_.outcome = coarse->outcome;
        result_.reason = std::move(coarse->reason);
        return;
      }
      result_.bytes_per_second = Summarize(rates_);
      result_.bytes_total = result_.bytes_per_burst * rates_.size();
    }
  }

 private:
  enum class Burst { kNone, kWarmup, kTimed };

  void Work(std::size_t t) {
    if (!AwaitStartGate(gate_)) return;
    Slot& me = slots_[t];
    const std::int64_t cpu_start = ThreadCpuNs();
    me.pin_error = PinCurrentThread(spec_.cpus[t]);
    SampleGuard guard;
    std::uint64_t sink = 0;
    for (std::uint64_t gen = 1;; ++gen) {
      // The barrier wait is inside the guarded interval: a thread descheduled
      // while the others wait delays the common start, so it spoils the burst.
      guard.Begin();
      me.arrived.store(gen, std::memory_order_release);
      if (t == 0) {
        Lead(gen);
      } else {
        AwaitRelease(gen);
      }
      if (quit_.load(std::memory_order_relaxed)) break;
      std::byte* const base = buffer_.arena().data();
      switch (spec_.op) {
        case BandwidthOp::kRead:
          sink += loops_.read(base + me.src, me.bytes);
          break;
        case BandwidthOp::kWrite:
          loops_.write(base + me.dst, me.bytes, kWritePattern);
          break;
        case BandwidthOp::kCopy:
          loops_.copy(base + me.dst, base + me.src, me.bytes);
          break;
      }
      me.end_ns = SampleClockNs();
      Discards why;
      me.clean = guard.Clean(why);
      me.why_unclean = why;
    }
    sink_.fetch_xor(sink, std::memory_order_relaxed);  // keeps the loads observable
    me.cpu_ns = ThreadCpuNs() - cpu_start;
  }

  void AwaitRelease(std::uint64_t gen) const {
    const std::int64_t deadline = MonotonicNs() + TimeoutNs();
    for (unsigned spins = 1; released_.load(std::memory_order_acquire) < gen; ++spins) {
      SpinHint();
      // A descheduled leader must not make us burn a CPU: poll slowly.
      if (spins % 256 == 0 && MonotonicNs() > deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  // Waits until every worker reached barrier `gen`. Returns false when a worker
  // was later than barrier_timeout (the burst it just ran is spoiled); sets
  // quit_ when the stop flag rises or nobody showed up within 10x that.
  bool AwaitArrivals(std::uint64_t gen) {
    const std::int64_t start = MonotonicNs();
    bool on_time = true;
    for (std::size_t t = 1; t < slots_.size(); ++t) {
      for (unsigned spins = 1; slots_[t].arrived.load(std::memory_order_acquire) < gen; ++spins) {
        SpinHint();
        if (spins % 256 != 0) continue;
        const std::int64_t waited = MonotonicNs() - start;
        if (waited <= TimeoutNs()) continue;
        on_time = false;
        if (Stopped()) return Quit(Outcome::kCancelled, "stop requested while waiting for a thread");
        if (waited > 10 * TimeoutNs()) {
          return Quit(Outcome::kTimeout, "cpu " + std::to_string(spec_.cpus[t]) +
                                             " did not reach the burst barrier within " +
                                             std::to_string(10 * spec_.barrier_timeout.count()) + " ms");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return on_time;
  }

  void Lead(std::uint64_t gen) {
    const bool on_time = AwaitArrivals(gen);
    if (quit_.load(std::memory_order_relaxed)) {
      // AwaitArrivals gave up: a thread is still out there; it quits when it arrives.
    } else if (const Slot* failed = gen == 1 ? PinFailure() : nullptr; failed != nullptr) {
      Quit(Outcome::kPinFailed, failed->pin_error);
    } else {
      if (last_ == Burst::kTimed) Judge(on_time);
      Decide();
    }
    Release(gen);
  }

  const Slot* PinFailure() const {
    const auto it = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.pin_error.empty(); });
    return it == slots_.end() ? nullptr : &*it;
  }

  // After the barrier: stop, or plan the next burst (warm-up first).
  void Decide() {
    if (Stopped()) {
      Quit(Outcome::kCancelled,
           "stop requested after " + std::to_string(rates_.size()) + " of " + std::to_string(spec_.bursts) + " bursts");
    } else if (rates_.size() == static_cast<std::size_t>(spec_.bursts)) {
      quit_.store(true, std::memory_order_relaxed);
    } else if (attempts_ >= MaxAttempts()) {
      const Discards& d = result_.discards;
      Quit(Outcome::kDisturbed, std::to_string(rates_.size()) + " of " + std::to_string(spec_.bursts) +
                                    " bursts clean after " + std::to_string(attempts_) + " attempts (context switch " +
                                    std::to_string(d.context_switch) + ", migration " + std::to_string(d.migration) +
                                    ", timeout " + std::to_string(d.timeout) + ")");
    } else {
      const std::size_t warmup =
          BytesPerSide(spec_.op, std::min(spec_.warmup_bytes, spec_.burst_bytes) / kLine * kLine);
      last_ = (last_ == Burst::kNone && warmup > 0) ? Burst::kWarmup : Burst::kTimed;
      const std::size_t offset = Plan(last_ == Burst::kWarmup ? warmup : BytesPerSide(spec_.op, spec_.burst_bytes));
      if (last_ == Burst::kTimed) result_.burst_offsets.push_back(offset);
    }
  }

  void Judge(bool on_time) {
    ++attempts_;
    std::int64_t end = start_ns_;
    for (const Slot& slot : slots_) end = std::max(end, slot.end_ns);
    const auto unclean = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.clean; });
    if (unclean != slots_.end()) {
      result_.discards += unclean->why_unclean;  // one reason per discarded burst
    } else if (!on_time || end <= start_ns_) {
      ++result_.discards.timeout;
    } else {
      timer_.Accept(end - start_ns_);
      rates_.push_back(static_cast<double>(result_.bytes_per_burst) * 1e9 / static_cast<double>(end - start_ns_));
    }
  }

  // Gives every thread its slice of the next burst, starting at the rotating
  // cursor, and returns the burst's first offset. A burst that would run past
  // the end of the buffer starts at 0 instead.
  std::size_t Plan(std::size_t bytes_per_side) {
    const bool copy = spec_.op == BandwidthOp::kCopy;
    const std::size_t footprint = bytes_per_side * (copy ? 2 : 1);
    std::size_t base = buffer_.cursor() / kLine * kLine;
    if (base + footprint * slots_.size() > buffer_.info().bytes) base = 0;
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      slots_[t].src = base + t * footprint;
      slots_[t].dst = slots_[t].src + (copy ? bytes_per_side : 0);
      slots_[t].bytes = bytes_per_side;
    }
    buffer_.cursor() = base + footprint * slots_.size();
    return base;
  }

  void Release(std::uint64_t gen) {
    start_ns_ = SampleClockNs();
    released_.store(gen, std::memory_order_release);
  }
  bool Quit(Outcome outcome, std::string reason) {
    result_.outcome = outcome;
    result_.reason = std::move(reason);
    quit_.store(true, std::memory_order_relaxed);
    return false;
  }
  bool Stopped() const { return spec_.stop != nullptr && spec_.stop->load(std::memory_order_relaxed); }
  std::int64_t TimeoutNs() const { return std::chrono::nanoseconds(spec_.barrier_timeout).count(); }
  int MaxAttempts() const { return spec_.max_attempts > 0 ? spec_.max_attempts : 3 * spec_.bursts; }

  BandwidthBuffer& buffer_;
  const BandwidthRunSpec& spec_;
  BandwidthResult& result_;
  const BandwidthLoops& loops_;
  TimerCheck timer_ = TimerCheck::Start(spec_.clock_step_ns);  // leader-only after the start
  std::vector<Slot> slots_;
  std::atomic<StartGate> gate_{StartGate::kClosed};
  std::atomic<std::uint64_t> released_{0};
  std::atomic<std::uint64_t> sink_{0};
  // Set by the leader before released_.store(release) and read by workers
  // after released_.load(acquire), which orders it. Atomic anyway: on a
  // barrier timeout the leader sets it while a late worker is still out.
  std::atomic<bool> quit_{false};
  // Leader-only bookkeeping.
  std::int64_t start_ns_ = 0;
  Burst last_ = Burst::kNone;
  int attempts_ = 0;
  std::vector<double> rates_;
};

}  // namespace

void RunBursts(BandwidthBuffer& buffer, const BandwidthRunSpec& spec, BandwidthResult& result) {
  BurstRun(buffer, spec, result).Run();
}

}  // namespace numaprobe::kernels
