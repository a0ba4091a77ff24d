// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/loaded_latency.cc: the sweep's threads and handshake.
#include "kernels/loaded_latency_run.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/bandwidth_paced.h"
#include "kernels/chase.h"
#include "kernels/clock.h"
#include "kernels/loaded_latency_load.h"
#include "kernels/pin.h"
#include "kernels/spin_hint.h"
#include "kernels/stats.h"
#include "kernels/thread_start.h"
#include "kernels/timer_resolution.h"

namespace numaprobe::kernels {
namespace {

// Spins between looks at the clock and the stop flag while waiting: a load
// thread answers within one unit (~0.05-7 µs), so healthy waits rarely look.
constexpr unsigned kSpinsPerCheck = 256;
// A wait longer than this polls slowly, so a descheduled load thread does not
// make the chase thread burn its CPU.
constexpr std::int64_t kSpinWaitNs = 1'000'000;

// How a wait for the load threads' acknowledgements ended.
enum class AckWait { kDone, kLate, kStopped };

class LoadedRun {
 public:
  LoadedRun(LatencyBuffer& chase, BandwidthBuffer& load, const LoadedLatencySpec& spec, LoadedLatencyResult& result)
      : chase_(chase), load_(load), spec_(spec), result_(result), slots_(spec.load_cpus.size()) {}

  void Run() {
    // Backstop for the load threads should the chase thread never stop them:
    // twice the chase thread's own budget (start, reference, one per delay).
    control_.deadline_ns =
        MonotonicNs() + 2 * static_cast<std::int64_t>(spec_.delays_ns.size() + 2) * Ns(spec_.point_timeout);
    // Load threads start at the first point's intensity: no burst of
    // unwanted traffic before a reference point.
    control_.delay_ns.store(spec_.reference_point ? kNoTrafficDelay : spec_.delays_ns.front());
    std::vector<std::thread> loads;
    std::thread chase;
    loads.reserve(slots_.size());
    try {
      for (std::size_t t = 0; t < slots_.size(); ++t) loads.emplace_back([this, t] { Load(t); });
      chase = std::thread([this] { Lead(); });
      gate_.store(StartGate::kOpen, std::memory_order_release);
    } catch (const std::system_error& e) {
      gate_.store(StartGate::kAbandoned, std::memory_order_release);
      Fail(Outcome::kThreadLimit, "cannot create measuring thread " + std::to_string(loads.size() + 1) + " of " +
                                      std::to_string(slots_.size() + 1) + ": " + e.what());
    }
    if (chase.joinable()) chase.join();
    control_.quit.store(true, std::memory_order_release);  // already set unless the chase thread never ran
    for (std::thread& thread : loads) thread.join();
    double cpu_ns = static_cast<double>(chase_cpu_ns_);
    for (const LoadSlot& slot : slots_) cpu_ns += static_cast<double>(slot.cpu_ns);
    result_.cpu_seconds = cpu_ns * 1e-9;
    result_.clock = timer_.report();
  }

 private:
  static std::int64_t Ns(std::chrono::milliseconds ms) { return std::chrono::nanoseconds(ms).count(); }
  bool Stopped() const { return spec_.stop != nullptr && spec_.stop->load(std::memory_order_relaxed); }
  void Fail(Outcome outcome, std::string reason) {
    result_.outcome = outcome;
    result_.reason = std::move(reason);
  }
  std::string Cpu(std::size_t t) const { return "load cpu " + std::to_string(spec_.load_cpus[t]); }

  void Load(std::size_t t) {
    if (!AwaitStartGate(gate_)) return;
    const PacedUnit unit = spec_.traffic == LoadTraffic::kRead ? PacedUnit{1024, 0} : PacedUnit{2048, 1024};
    const std::size_t region = load_.info().bytes / slots_.size() / unit.bytes() * unit.bytes();
    const LoadJob job{spec_.load_cpus[t], &LoopsFor(result_.isa), unit, load_.arena().data() + t * region, region};
    sink_.fetch_xor(RunLoadThread(job, control_, slots_[t]), std::memory_order_relaxed);
  }

  // ---- Chase thread: leads the sweep. ----

  void Lead() {
    if (!AwaitStartGate(gate_)) return;
    const std::int64_t cpu_start = ThreadCpuNs();
    Sweep();
    control_.quit.store(true, std::memory_order_release);
    chase_cpu_ns_ = ThreadCpuNs() - cpu_start;
  }

  void Sweep() {
    if (std::string err = PinCurrentThread(spec_.chase_cpu); !err.empty()) {
      return Fail(Outcome::kPinFailed, "chase " + err);
    }
    // Boundary 1 is the start: load threads acknowledge it once pinned and calibrated.
    switch (AwaitAcks(1, Ns(spec_.point_timeout))) {
      case AckWait::kStopped:
        return Fail(Outcome::kCancelled, "stop requested while the load threads started");
      case AckWait::kLate:
        return Fail(Outcome::kTimeout,
                    Cpu(late_) + " did not start within " + std::to_string(spec_.point_timeout.count()) + " ms");
      case AckWait::kDone:
        break;
    }
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      if (!slots_[t].pin_error.empty()) return Fail(Outcome::kPinFailed, "load " + slots_[t].pin_error);
      result_.spins_per_ns.push_back(slots_[t].spins_per_ns);
    }
    if (spec_.reference_point) {
      result_.reference = MeasurePoint(kNoTrafficDelay);
      if (result_.reference.outcome == Outcome::kCancelled || result_.reference.outcome == Outcome::kTimeout) {
        return Fail(result_.reference.outcome, result_.reference.reason);
      }
    }
    for (const std::uint32_t delay : spec_.delays_ns) {
      LoadedLatencyPoint point = MeasurePoint(delay);
      if (point.outcome == Outcome::kCancelled || point.outcome == Outcome::kTimeout) {
        return Fail(point.outcome, std::move(point.reason));
      }
      result_.points.push_back(std::move(point));
    }
  }

  // Publishes the next sample boundary and waits for every load thread to
  // acknowledge it.
  AckWait Boundary() {
    control_.boundary.store(++boundary_value_, std::memory_order_release);
    return AwaitAcks(boundary_value_, Ns(spec_.answer_timeout));
  }

  AckWait AwaitAcks(std::uint64_t boundary, std::int64_t timeout_ns) {
    const std::int64_t start = MonotonicNs();
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      for (unsigned spins = 1; slots_[t].ack.load(std::memory_order_acquire) < boundary; ++spins) {
        SpinHint();
        if (spins % kSpinsPerCheck != 0) continue;
        if (Stopped()) return AckWait::kStopped;
        const std::int64_t waited = MonotonicNs() - start;
        if (waited > timeout_ns) {
          late_ = t;
          return AckWait::kLate;
        }
        if (waited > kSpinWaitNs) std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    return AckWait::kDone;
  }

  // Whether no load thread was switched out or migrated between the marks it
  // left at the last two boundaries (which bracket the chase); counts one
  // discard for the first thread that was.
  bool LoadsClean(Discards& discards) const {
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      const ThreadSchedState& a = opened_[t].sched;
      const ThreadSchedState& b = slots_[t].mark.sched;
      if (a.voluntary_switches != b.voluntary_switches || a.involuntary_switches != b.involuntary_switches) {
        ++discards.context_switch;
        return false;
      }
      if (a.cpu != b.cpu) {
        ++discards.migration;
        return false;
      }
    }
    return true;
  }

  // One sample: boundary, chase, boundary. `clean` says whether every thread
  // (chase and load) ran undisturbed in between; only then is `sample` set.
  struct Sample {
    std::int64_t ns = 0;  // the chase's duration
    double seconds_per_load = 0;
    double bytes_per_second = 0;
    std::uint64_t bytes = 0;
  };
  AckWait TakeSample(LoadedLatencyPoint& point, bool& clean, Sample& sample) {
    clean = false;
    if (const AckWait w = Boundary(); w != AckWait::kDone) return w;
    if (chase_.flushed()) chase_.Flush();  // see kernels/latency.h: the chase must miss the caches
    opened_.clear();
    for (const LoadSlot& slot : slots_) opened_.push_back(slot.mark);
    guard_.Begin();
    const std::int64_t t0 = SampleClockNs();
    chase_.cursor() = Chase(chase_.cursor(), spec_.loads_per_sample);
    const std::int64_t t1 = SampleClockNs();
    const bool chase_clean = guard_.Clean(point.discards);
    if (const AckWait w = Boundary(); w != AckWait::kDone) return w;
    // Judged on both sides, so each side's count says how often it was hit.
    const bool loads_clean = LoadsClean(point.load_discards);
    if (!chase_clean || !loads_clean) return AckWait::kDone;
    sample = {t1 - t0, static_cast<double>(t1 - t0) * 1e-9 / static_cast<double>(spec_.loads_per_sample), 0, 0};
    for (std::size_t t = 0; t < slots_.size(); ++t) {
      const LoadMark& a = opened_[t];
      const LoadMark& b = slots_[t].mark;
      sample.bytes += b.bytes - a.bytes;
      sample.bytes_per_second +=
          static_cast<double>(b.bytes - a.bytes) * 1e9 / static_cast<double>(std::max<std::int64_t>(b.ns - a.ns, 1));
    }
    clean = true;
    return AckWait::kDone;
  }

  LoadedLatencyPoint MeasurePoint(std::uint32_t delay_ns) {
    LoadedLatencyPoint point;
    point.delay_ns = delay_ns;
    const std::string where =
        delay_ns == kNoTrafficDelay ? "reference (no traffic): " : "delay " + std::to_string(delay_ns) + " ns: ";
    control_.delay_ns.store(delay_ns, std::memory_order_relaxed);
    const std::int64_t deadline = MonotonicNs() + Ns(spec_.point_timeout);
    const std::uint64_t first_boundary = boundary_value_;  // the last one published before this point
    chase_.cursor() = Chase(chase_.cursor(), spec_.settle_loads);
    const int max_attempts = spec_.max_attempts > 0 ? spec_.max_attempts : 3 * spec_.samples;
    std::vector<double> latency;
    std::vector<double> rate;
    TimerCheck timer(timer_.step_ns());  // this point's samples, judged on their own
    int attempts = 0;
    while (std::ssize(latency) < spec_.samples) {
      if (Stopped()) return Ended(point, Outcome::kCancelled, where + "stop requested");
      const bool expired = MonotonicNs() > deadline;
      if (expired || attempts >= max_attempts) {
        return Ended(point, Outcome::kDisturbed,
                     where + std::to_string(latency.size()) + " of " + std::to_string(spec_.samples) +
                         " samples clean after " + std::to_string(attempts) + " attempts" +
                         (expired ? " (point deadline " + std::to_string(spec_.point_timeout.count()) + " ms)" : "") +
                         "; discarded for the chase thread: " + Describe(point.discards) +
                         "; for the load threads: " + Describe(point.load_discards));
      }
      ++attempts;
      bool clean = false;
      Sample sample;
      switch (TakeSample(point, clean, sample)) {
        case AckWait::kStopped:
          return Ended(point, Outcome::kCancelled, where + "stop requested");
        case AckWait::kLate:
          ++point.load_discards.timeout;
          // Silent for the whole point: the thread is stuck, not merely slow,
          // and waiting for it at every further point would only burn time.
          if (MonotonicNs() > deadline && slots_[late_].ack.load(std::memory_order_acquire) <= first_boundary) {
            return Ended(point, Outcome::kTimeout,
                         where + Cpu(late_) + " answered no sample boundary within the point deadline of " +
                             std::to_string(spec_.point_timeout.count()) + " ms");
          }
          continue;
        case AckWait::kDone:
          break;
      }
      if (!clean) continue;
      timer.Accept(sample.ns);
      timer_.Accept(sample.ns);
      latency.push_back(sample.seconds_per_load);
      rate.push_back(sample.bytes_per_second);
      point.load_bytes += sample.bytes;
    }
    if (std::optional<Failure> coarse = timer.Verdict(where + "chase cpu " + std::to_string(spec_.chase_cpu))) {
      return Ended(point, coarse->outcome, std::move(coarse->reason));
    }
    point.seconds_per_load = Summarize(latency);
    point.load_bytes_per_second = Summarize(rate);
    return point;
  }

  static std::string Describe(const Discards& d) {
    return "context switch " + std::to_string(d.context_switch) + ", migration " + std::to_string(d.migration) +
           ", timeout " + std::to_string(d.timeout);
  }

  static LoadedLatencyPoint Ended(LoadedLatencyPoint& point, Outcome outcome, std::string reason) {
    point.outcome = outcome;
    point.reason = std::move(reason);
    point.load_bytes = 0;  // no figures from a point that did not complete
    return std::move(point);
  }

  LatencyBuffer& chase_;
  BandwidthBuffer& load_;
  const LoadedLatencySpec& spec_;
  LoadedLatencyResult& result_;
  std::vector<LoadSlot> slots_;
  LoadControl control_;
  std::atomic<StartGate> gate_{StartGate::kClosed};
  std::atomic<std::uint64_t> sink_{0};  // keeps the load threads' loads observable
  // Chase-thread-only state (read by Run() after join).
  std::uint64_t boundary_value_ = 1;
  std::size_t late_ = 0;  // the load thread a kLate wait gave up on
  std::vector<LoadMark> opened_;
  SampleGuard guard_;
  TimerCheck timer_ = TimerCheck::Start(spec_.clock_step_ns);  // every point's samples
  std::int64_t chase_cpu_ns_ = 0;
};

}  // namespace

void RunLoadedLatency(LatencyBuffer& chase, BandwidthBuffer& load, const LoadedLatencySpec& spec,
                      LoadedLatencyResult& result) {
  LoadedRun(chase, load, spec, result).Run();
}

}  // namespace numaprobe::kernels
