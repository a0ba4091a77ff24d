// SPDX-License-Identifier: Apache-2.0
// A host and probes for the scheduler loop that the test controls: the
// production simulation (daemon/serve/simulation.h: a clock that only moves
// when the loop sleeps or a probe runs, state in memory, host facts from a
// fixture tree) and probes whose cost, duration and outcome the test scripts,
// including runs that hang. The real loop (scheduler.cc) runs on them on its
// own thread, so hours of schedule take milliseconds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/serve/loop_environment.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/simulation.h"

namespace numaprobe::daemon::scripted {

namespace k = kernels;

inline constexpr std::int64_t kSecond = kSimulatedSecond;
// How long a test waits, in real time, for the loop to get somewhere.
inline constexpr auto kPatience = std::chrono::seconds(30);

// Two nodes of two CPUs each; the restriction says which the process may use.
inline constexpr const char* kTwoNodes = "pack:2 [numa(memory=1GiB)] core:2 pu:1";

// The scripted hosts' jitter seed: a test sees the same round starts on every
// run (a host's is random).
inline constexpr std::uint64_t kJitterSeed = 52;

// Where the scripted hosts read host facts: a fixture tree, never this machine.
inline FactRoots FixtureFactRoots() {
  const std::string root = std::string(NUMAPROBE_FIXTURES) + "/host_facts/thp/before";
  return FactRoots{root + "/proc", root + "/sys"};
}

// A simulated host of hwloc's synthetic description `synthetic`, of which the
// process may use `restriction`, with its state in memory (`files`, shared
// with the host of a simulated restart), or in the configured directory when
// `files` is null (OnDisk).
inline std::unique_ptr<SimulatedHost> ScriptedHost(
    std::string synthetic = kTwoNodes, k::Restriction restriction = {std::set<int>{0, 1, 2, 3}, std::set<int>{0, 1}},
    std::shared_ptr<std::map<std::string, std::string>> files = std::make_shared<std::map<std::string, std::string>>(),
    std::int64_t start_ns = 1000 * kSecond, TestHooks hooks = {}) {
  auto topology = [synthetic](const k::Restriction& r) { return k::Topology::FromSynthetic(synthetic, r); };
  auto host =
      std::make_unique<SimulatedHost>(topology, std::move(restriction), std::move(hooks), std::move(files), start_ns);
  host->jitter_seed = kJitterSeed;
  host->fact_roots = FixtureFactRoots();
  return host;
}

// The two-node host with its state files on disk, for the tests of the file.
inline std::unique_ptr<SimulatedHost> OnDisk() {
  return ScriptedHost(kTwoNodes, {std::set<int>{0, 1, 2, 3}, std::set<int>{0, 1}}, nullptr);
}

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
  ScriptedExecutor(SimulatedHost& host, ScriptFn script) : host_(host), script_(std::move(script)) {}

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
    result_ = ProbeRun{task_.kind->Simulated(task_.target, outcome, current_.value), current_.cpu_seconds, 0};
    return true;
  }

  SimulatedHost& host_;
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
