// SPDX-License-Identifier: Apache-2.0
// What the scheduler loop takes from the host besides running probes: time,
// sleeping, the CPUs and memory nodes it may use, the plan, where its state
// is kept, the test hooks, where host facts are read, the CPU
// the process spends besides the runs, the jitter's seed and systemd.
// HostEnvironment is the real host; tests hand the loop a clock they advance
// (tests/daemon/scheduler_loop_test.cc), so the real loop runs hours of
// schedule in milliseconds.
//
// Thread safety: MonotonicNs and UnixNow are called from the loop and the
// probe worker; everything else from the loop thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "daemon/common/runtime_facts.h"
#include "daemon/common/test_hooks.h"
#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/serve/results/state_storage.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

class LoopEnvironment {
 public:
  virtual ~LoopEnvironment() = default;

  // Monotonic nanoseconds: pacing, intervals and the budget's window.
  virtual std::int64_t MonotonicNs() = 0;
  // Unix seconds: when runs completed, when host facts changed.
  virtual double UnixNow() = 0;
  // Sleeps up to `ns` or until `wake()` holds; `cv` is notified (with the
  // mutex `lock` holds) whenever `wake()` may have changed.
  virtual void Sleep(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::int64_t ns,
                     const std::function<bool()>& wake) = 0;

  // What this process may use now (container cpusets change at run time).
  virtual kernels::Restriction Restriction() = 0;
  // The plan `config` implies now, and the topology it was made on.
  virtual kernels::Expected<Plan> PlanNow(const Config& config, kernels::Topology* topology) = 0;

  // Where the state of `state_directory` is kept (the directory itself on a
  // host; memory in a simulation).
  virtual std::unique_ptr<StateStorage> OpenState(const std::string& state_directory) = 0;
  // How often at most the state file is written between the writes that
  // cannot wait (results/result_model.h, kSaveSpacingNs); a simulation that
  // stops cleanly may write less often.
  virtual std::optional<std::int64_t> StateSaveSpacingNs() { return std::nullopt; }
  // The test-only hooks in force (common/test_hooks.h): the host's are what
  // `serve` read from its environment at start; a scripted host's, the test's.
  virtual TestHooks Hooks() = 0;
  // Where host facts are read (common/runtime_facts.h): the host's are
  // --path.procfs and --path.sysfs; a scripted host names a fixture tree, so
  // a test reads nothing of the real host.
  virtual FactRoots HostFactRoots() = 0;

  // CPU-seconds the process has spent for probing outside the probe runs
  // (a run's own CPU is its ProbeRun::cpu_seconds), cumulative: its start
  // (everything before the first call, which the loop makes on its thread
  // before its first probe: the configuration, the topology, the state file)
  // and the loop's thread since (plans, host facts, state writes). The HTTP
  // server's threads are not in it: scrapes are the scrapers' to pace.
  virtual double OwnCpuSeconds() = 0;
  // The seed of the generator that jitters round starts, taken once when the
  // loop is made: random on a host, so that the hosts of a fleet do not probe
  // in lockstep; a scripted host fixes it, so a test sees the same rounds on
  // every run.
  virtual std::uint64_t JitterSeed() = 0;

  // systemd's notify protocol (sd_notify.h).
  virtual void Notify(std::string_view message) = 0;
  virtual std::optional<std::chrono::milliseconds> WatchdogInterval() = 0;
};

// This host, with the test hooks `serve` read at start and the fact trees its flags name.
std::unique_ptr<LoopEnvironment> HostEnvironment(TestHooks hooks, FactRoots fact_roots);

}  // namespace numaprobe::daemon
