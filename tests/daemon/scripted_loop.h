// A host and probes for the scheduler loop that the test controls: a clock
// that only moves when the loop sleeps or a probe runs, and probes whose
// cost, duration and outcome the test scripts. The real loop (scheduler.cc)
// runs on them on its own thread, so hours of schedule take milliseconds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/loop_environment.h"
#include "daemon/serve/probe_executor.h"
#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"

namespace numaprobe::daemon::scripted {

namespace k = kernels;

inline constexpr std::int64_t kSecond = 1'000'000'000;
// How long a test waits, in real time, for the loop to get somewhere.
inline constexpr auto kPatience = std::chrono::seconds(30);

// Two nodes of two CPUs each; Restriction() says which the process may use.
inline constexpr const char* kTwoNodes = "pack:2 [numa(memory=1GiB)] core:2 pu:1";

class ScriptedHost final : public LoopEnvironment {
 public:
  // A host of hwloc's synthetic description `synthetic`, of which the process
  // may use `restriction`.
  explicit ScriptedHost(std::string synthetic = kTwoNodes,
                        k::Restriction restriction = {std::set<int>{0, 1, 2, 3}, std::set<int>{0, 1}})
      : synthetic_(std::move(synthetic)), restriction_(std::move(restriction)) {}

  std::int64_t MonotonicNs() override { return now_.load(); }
  double UnixNow() override { return 1.7e9 + static_cast<double>(now_.load()) / kSecond; }

  // Sleeping moves the clock to the deadline at once, unless that is past
  // where the test parked the loop (RunUntil): then the loop waits there, in
  // real time, until it is woken (stop, reload) or the test moves it on.
  void Sleep(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::int64_t ns,
             const std::function<bool()>& wake) override {
    if (wake()) return;
    {
      std::lock_guard guard(mu_);
      const std::int64_t deadline = now_.load() + ns;
      if (deadline <= park_at_) {
        now_.store(deadline);
        return;
      }
      now_.store(std::max(now_.load(), park_at_));
      parked_ = true;
      parked_cv_.notify_all();
    }
    while (!wake()) {
      cv.wait_for(lock, std::chrono::milliseconds(1), wake);
      std::lock_guard guard(mu_);
      if (park_at_ > now_.load()) break;
    }
    std::lock_guard guard(mu_);
    parked_ = false;
  }

  k::Restriction Restriction() override {
    std::lock_guard guard(mu_);
    return restriction_;
  }
  k::Expected<Plan> PlanNow(const Config& config, k::Topology* topology) override {
    auto host = k::Topology::FromSynthetic(synthetic_, Restriction());
    if (!host.ok()) return host.failure();
    auto plan = BuildPlan(config.targets, host.value());
    if (plan.ok() && topology != nullptr) *topology = std::move(host).value();
    ++plans;
    return plan;
  }

  void Notify(std::string_view message) override {
    std::lock_guard guard(mu_);
    notifications_.push_back({now_.load(), std::string(message)});
  }
  std::optional<std::chrono::milliseconds> WatchdogInterval() override { return watchdog; }

  // Lets the loop run until its clock reaches `ns` and it sleeps; false if it
  // did not get there in kPatience of real time.
  bool RunUntil(std::int64_t ns) {
    AllowUntil(ns);
    std::unique_lock guard(mu_);
    return parked_cv_.wait_for(guard, kPatience, [&] { return parked_ && now_.load() >= ns; });
  }
  // The same without waiting: for a test that meets the loop in a held run.
  void AllowUntil(std::int64_t ns) {
    std::lock_guard guard(mu_);
    park_at_ = ns;
  }
  void SetRestriction(k::Restriction restriction) {
    std::lock_guard guard(mu_);
    restriction_ = std::move(restriction);
  }
  void Advance(std::int64_t ns) { now_.fetch_add(ns); }
  // When the loop sent WATCHDOG=1 (monotonic ns).
  std::vector<std::int64_t> WatchdogPings() {
    std::lock_guard guard(mu_);
    std::vector<std::int64_t> pings;
    for (const auto& [at, message] : notifications_) {
      if (message == "WATCHDOG=1") pings.push_back(at);
    }
    return pings;
  }

  std::optional<std::chrono::milliseconds> watchdog;  // set before the loop starts
  std::atomic<int> plans{0};

 private:
  std::atomic<std::int64_t> now_{1000 * kSecond};
  std::mutex mu_;
  std::condition_variable parked_cv_;
  std::int64_t park_at_ = 0;  // guarded by mu_
  bool parked_ = false;       // guarded by mu_
  const std::string synthetic_;
  k::Restriction restriction_;                                       // guarded by mu_
  std::vector<std::pair<std::int64_t, std::string>> notifications_;  // guarded by mu_
};

// How one run goes.
struct Script {
  k::Outcome outcome = k::Outcome::kOk;
  double cpu_seconds = 0.01;
  double seconds = 0.02;  // on the loop's clock
  double value = 1e-7;    // the figure (seconds, bytes per second)
  bool held = false;      // runs until Release(), or until stop is raised
  bool deaf = false;      // held, and never notices stop (starved of CPU)
};

// One run as the executor saw it.
struct Started {
  const ProbeKind* kind;
  ProbeTarget target;
  int attempt;
  std::int64_t start_ns;
  std::int64_t end_ns = -1;  // -1 while running or abandoned
  double cpu_seconds;
  bool confirmation = false;  // Task::confirmation
};

class ScriptedExecutor final : public ProbeExecutor {
 public:
  using ScriptFn = std::function<Script(const Task& task, int run_index)>;
  ScriptedExecutor(ScriptedHost& host, ScriptFn script) : host_(host), script_(std::move(script)) {}

  void Adopt(const k::Topology&, const Config&, ProbeSettings, ProbeLock&, std::function<void()>) override {
    ++adopted;
  }
  void SetPriority(ProbePriority) override {}

  void Start(const Task& task, bool, const std::atomic<bool>* stop) override {
    std::lock_guard guard(mu_);
    current_ = script_(task, static_cast<int>(runs_.size()));
    remaining_ns_ = static_cast<std::int64_t>(current_.seconds * kSecond);
    stop_ = stop;
    released_ = false;
    task_ = task;
    runs_.push_back(
        {task.kind, task.target, task.attempt, host_.MonotonicNs(), -1, current_.cpu_seconds, task.confirmation});
    cv_.notify_all();
  }

  bool Wait(std::chrono::milliseconds timeout) override {
    std::unique_lock guard(mu_);
    const std::int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    if ((current_.held || current_.deaf) && !released_) {
      if (stop_->load() && !current_.deaf) return Finish(k::Outcome::kCancelled);
      host_.Advance(timeout_ns);
      cv_.wait_for(guard, std::chrono::milliseconds(1));
      return false;
    }
    const std::int64_t step = std::min(timeout_ns, remaining_ns_);
    host_.Advance(step);
    remaining_ns_ -= step;
    return remaining_ns_ == 0 && Finish(current_.outcome);
  }

  ProbeRun Result() override {
    std::lock_guard guard(mu_);
    return result_;
  }
  void Abandon() override { abandoned = true; }
  void ReleaseBuffers() override {}

  // Test side.
  std::vector<Started> Runs() {
    std::lock_guard guard(mu_);
    return runs_;
  }
  // Waits (real time) until `count` runs have started.
  bool WaitForRuns(std::size_t count) {
    std::unique_lock guard(mu_);
    return cv_.wait_for(guard, kPatience, [&] { return runs_.size() >= count; });
  }
  void Release() {
    std::lock_guard guard(mu_);
    released_ = true;
    cv_.notify_all();
  }

  std::atomic<int> adopted{0};
  std::atomic<bool> abandoned{false};

 private:
  // Called with mu_ held; always true.
  bool Finish(k::Outcome outcome) {
    runs_.back().end_ns = host_.MonotonicNs();
    result_ = ProbeRun{RecordOf(task_, outcome, current_.value), current_.cpu_seconds, 0};
    return true;
  }

  static RecordPtr RecordOf(const Task& task, k::Outcome outcome, double value) {
    if (task.kind == &LatencyProbe()) {
      k::LatencyResult r;
      r.outcome = outcome;
      r.seconds_per_load.median = value;
      return std::make_shared<ProbeRecordOf<k::LatencyResult>>(*task.kind, task.target, r);
    }
    if (task.kind == &BandwidthProbe()) {
      k::BandwidthResult r;
      r.outcome = outcome;
      r.bytes_per_second.median = value;
      return std::make_shared<ProbeRecordOf<k::BandwidthResult>>(*task.kind, task.target, r);
    }
    k::C2cResult r;
    EXPECT_EQ(task.kind, &CoreToCoreProbe()) << "no scripted record for " << task.kind->name();
    r.outcome = outcome;
    r.one_way_seconds.median = value;
    return std::make_shared<ProbeRecordOf<k::C2cResult>>(*task.kind, task.target, r);
  }

  ScriptedHost& host_;
  ScriptFn script_;
  std::mutex mu_;
  std::condition_variable cv_;
  Script current_;
  Task task_;
  std::int64_t remaining_ns_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  bool released_ = false;
  ProbeRun result_;
  std::vector<Started> runs_;
};

}  // namespace numaprobe::daemon::scripted
