// SPDX-License-Identifier: Apache-2.0
// A host and probes on a simulated clock, so that the real scheduler loop
// (scheduler.cc) and results model run hours or days of schedule in seconds:
// `numaprobe topology --config.file` sizes a host with them (the sizing
// preview, preview.h), and the schedule's tests drive them.
//
// SimulatedHost: a clock that moves only when the loop sleeps or a probe
// runs; the topology, what the process may use and the test hooks are given,
// never read from this machine (and so is the host facts' tree, `fact_roots`,
// when a test names one); state is kept in memory, or in a directory a test
// names. A controller lets the loop run until a time (RunUntil) and meets it
// parked there, then reads the ResultStore or changes the host.
// SimulatedExecutor: each run costs what a TaskCostEstimate says (the first
// task of a visit with its preparation) in CPU and as much wall time, and
// succeeds with a fixed figure unless a script says otherwise.
//
// Thread safety: the loop calls the LoopEnvironment and ProbeExecutor methods
// from its thread; RunUntil, AllowUntil, SetRestriction and Advance are for
// one controlling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/serve/loop_environment.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/task_cost_estimate.h"

namespace numaprobe::daemon {

inline constexpr std::int64_t kSimulatedSecond = 1'000'000'000;

class SimulatedHost final : public LoopEnvironment {
 public:
  // The topology under a restriction: what PlanNow plans on.
  using TopologySource = std::function<kernels::Expected<kernels::Topology>(const kernels::Restriction&)>;

  // `state_files` and `start_ns` carry a simulated restart over: the next
  // host keeps the files and goes on at the time the last one stopped. No
  // `state_files`: the state is kept in the configured directory (a test's
  // own directory, for the tests of the file itself).
  SimulatedHost(TopologySource topology, kernels::Restriction restriction, TestHooks hooks,
                std::shared_ptr<std::map<std::string, std::string>> state_files =
                    std::make_shared<std::map<std::string, std::string>>(),
                std::int64_t start_ns = 0);

  std::int64_t MonotonicNs() override { return now_.load(); }
  double UnixNow() override { return kUnixStart + static_cast<double>(now_.load()) / kSimulatedSecond; }
  // Moves the clock to the deadline at once, unless that is past where the
  // controller parked the loop: then the loop waits there, in real time, until
  // it is woken (stop, reload) or the controller moves it on.
  void Sleep(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::int64_t ns,
             const std::function<bool()>& wake) override;
  kernels::Restriction Restriction() override;
  kernels::Expected<Plan> PlanNow(const Config& config, kernels::Topology* topology) override;
  std::unique_ptr<StateStorage> OpenState(const std::string& state_directory) override;
  TestHooks Hooks() override { return hooks_; }
  FactRoots HostFactRoots() override { return fact_roots; }
  std::optional<std::int64_t> StateSaveSpacingNs() override { return save_spacing_ns; }
  double OwnCpuSeconds() override { return own_cpu_seconds.load(); }
  std::uint64_t JitterSeed() override;
  void Notify(std::string_view message) override;
  std::optional<std::chrono::milliseconds> WatchdogInterval() override { return watchdog; }

  // Lets the loop run until its clock reaches `ns` and it sleeps; false if it
  // did not get there within `patience` of real time.
  bool RunUntil(std::int64_t ns, std::chrono::seconds patience = std::chrono::seconds(60));
  // The same without waiting: for a controller that meets the loop in a held run.
  void AllowUntil(std::int64_t ns);
  void SetRestriction(kernels::Restriction restriction);
  void Advance(std::int64_t ns) { now_.fetch_add(ns); }
  // When the loop sent WATCHDOG=1 (monotonic ns).
  std::vector<std::int64_t> WatchdogPings();
  // The state files, shared with the next host of a simulated restart.
  std::shared_ptr<std::map<std::string, std::string>> state_files() const { return state_files_; }

  std::optional<std::chrono::milliseconds> watchdog;  // set before the loop starts
  std::optional<std::int64_t> save_spacing_ns;        // the host's unless set
  std::atomic<double> own_cpu_seconds{0};             // OwnCpuSeconds: what a test says the process spent
  std::optional<std::uint64_t> jitter_seed;           // random, as on a host, unless set
  std::atomic<int> plans{0};
  // Where host facts are read: this machine's /proc and /sys unless a test
  // names a fixture tree (set before the loop starts).
  FactRoots fact_roots;

  // Unix time at simulated monotonic 0.
  static constexpr double kUnixStart = 1.7e9;

 private:
  TopologySource topology_;
  TestHooks hooks_;
  std::shared_ptr<std::map<std::string, std::string>> state_files_;
  std::atomic<std::int64_t> now_;
  std::mutex mu_;
  std::condition_variable parked_cv_;
  std::int64_t park_at_;                                             // guarded by mu_
  bool parked_ = false;                                              // guarded by mu_
  kernels::Restriction restriction_;                                 // guarded by mu_
  std::vector<std::pair<std::int64_t, std::string>> notifications_;  // guarded by mu_
};

class SimulatedExecutor final : public ProbeExecutor {
 public:
  // How one run goes, when a script says (else: ok, the estimate's cost,
  // figure 1). `cpu_seconds` < 0: the estimate's cost.
  struct Script {
    kernels::Outcome outcome = kernels::Outcome::kOk;
    double cpu_seconds = -1;
    double figure = 1;
  };
  using ScriptFn = std::function<Script(const Task& task, int run_index)>;

  SimulatedExecutor(SimulatedHost& host, TaskCostEstimate costs, ScriptFn script = {});

  void Adopt(const kernels::Topology&, const Config&, ProbeSettings, ProbeLock&, std::function<void()>) override {}
  void SetPriority(ProbePriority) override {}
  void Start(const Task& task, bool ends_visit, const std::atomic<bool>* stop) override;
  bool Wait(std::chrono::milliseconds timeout) override;
  ProbeRun Result() override { return result_; }
  void Abandon() override {}
  void ReleaseBuffers() override { previous_.reset(); }

  // Runs so far (for a controller reading them when the loop is parked).
  int runs() const { return runs_.load(); }

 private:
  SimulatedHost& host_;
  TaskCostEstimate costs_;
  ScriptFn script_;
  std::optional<Task> previous_;  // the last run, while its visit goes on
  std::int64_t remaining_ns_ = 0;
  ProbeRun result_;
  std::atomic<int> runs_{0};
};

}  // namespace numaprobe::daemon
