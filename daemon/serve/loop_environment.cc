// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/loop_environment.h"

#include <random>
#include <utility>

#include "daemon/common/wall_clock.h"
#include "daemon/probing/plan_on_host.h"
#include "daemon/serve/sd_notify.h"
#include "kernels/clock.h"

namespace numaprobe::daemon {

namespace {

class Host final : public LoopEnvironment {
 public:
  Host(TestHooks hooks, FactRoots fact_roots) : hooks_(std::move(hooks)), fact_roots_(std::move(fact_roots)) {}
  std::int64_t MonotonicNs() override { return kernels::MonotonicNs(); }
  double UnixNow() override { return daemon::UnixNow(); }
  void Sleep(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::int64_t ns,
             const std::function<bool()>& wake) override {
    cv.wait_for(lock, std::chrono::nanoseconds(ns), wake);
  }
  kernels::Restriction Restriction() override { return kernels::Restriction::FromProcess(); }
  kernels::Expected<Plan> PlanNow(const Config& config, kernels::Topology* topology) override {
    return PlanOnHost(config, topology);
  }
  std::unique_ptr<StateStorage> OpenState(const std::string& state_directory) override {
    return DirectoryStorage(state_directory);
  }
  TestHooks Hooks() override { return hooks_; }
  FactRoots HostFactRoots() override { return fact_roots_; }
  double OwnCpuSeconds() override {
    // The start: what the process had spent when the loop first asked (its
    // own thread had just begun), then the loop's thread.
    if (!start_ns_) start_ns_ = kernels::ReadClockNs(CLOCK_PROCESS_CPUTIME_ID) - kernels::ThreadCpuNs();
    return static_cast<double>(*start_ns_ + kernels::ThreadCpuNs()) / 1e9;
  }
  std::uint64_t JitterSeed() override { return std::random_device{}(); }
  void Notify(std::string_view message) override { SdNotify(message); }
  std::optional<std::chrono::milliseconds> WatchdogInterval() override { return SdWatchdogInterval(); }

 private:
  TestHooks hooks_;
  FactRoots fact_roots_;
  std::optional<std::int64_t> start_ns_;
};

}  // namespace

std::unique_ptr<LoopEnvironment> HostEnvironment(TestHooks hooks, FactRoots fact_roots) {
  return std::make_unique<Host>(std::move(hooks), std::move(fact_roots));
}

}  // namespace numaprobe::daemon
