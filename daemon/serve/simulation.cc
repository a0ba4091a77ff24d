// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/simulation.h"

#include <algorithm>
#include <random>

namespace numaprobe::daemon {

namespace k = kernels;

SimulatedHost::SimulatedHost(TopologySource topology, k::Restriction restriction, TestHooks hooks,
                             std::shared_ptr<std::map<std::string, std::string>> state_files, std::int64_t start_ns)
    : topology_(std::move(topology)),
      hooks_(std::move(hooks)),
      state_files_(std::move(state_files)),
      now_(start_ns),
      park_at_(start_ns),
      restriction_(std::move(restriction)) {}

void SimulatedHost::Sleep(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::int64_t ns,
                          const std::function<bool()>& wake) {
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

k::Restriction SimulatedHost::Restriction() {
  std::lock_guard guard(mu_);
  return restriction_;
}

k::Expected<Plan> SimulatedHost::PlanNow(const Config& config, k::Topology* topology) {
  auto host = topology_(Restriction());
  if (!host.ok()) return host.failure();
  auto plan = BuildPlan(config.targets, host.value());
  if (plan.ok() && topology != nullptr) *topology = std::move(host).value();
  ++plans;
  return plan;
}

std::unique_ptr<StateStorage> SimulatedHost::OpenState(const std::string& state_directory) {
  if (!state_files_) return DirectoryStorage(state_directory);
  return MemoryStorage(state_files_);
}

std::uint64_t SimulatedHost::JitterSeed() { return jitter_seed ? *jitter_seed : std::random_device{}(); }

void SimulatedHost::Notify(std::string_view message) {
  std::lock_guard guard(mu_);
  notifications_.push_back({now_.load(), std::string(message)});
  // Only the watchdog's pings are asked for; the rest would grow without bound.
  if (notifications_.size() > 100'000) notifications_.erase(notifications_.begin(), notifications_.begin() + 50'000);
}

bool SimulatedHost::RunUntil(std::int64_t ns, std::chrono::seconds patience) {
  AllowUntil(ns);
  std::unique_lock guard(mu_);
  return parked_cv_.wait_for(guard, patience, [&] { return parked_ && now_.load() >= ns; });
}

void SimulatedHost::AllowUntil(std::int64_t ns) {
  std::lock_guard guard(mu_);
  park_at_ = ns;
}

void SimulatedHost::SetRestriction(k::Restriction restriction) {
  std::lock_guard guard(mu_);
  restriction_ = std::move(restriction);
}

std::vector<std::int64_t> SimulatedHost::WatchdogPings() {
  std::lock_guard guard(mu_);
  std::vector<std::int64_t> pings;
  for (const auto& [at, message] : notifications_) {
    if (message == "WATCHDOG=1") pings.push_back(at);
  }
  return pings;
}

SimulatedExecutor::SimulatedExecutor(SimulatedHost& host, TaskCostEstimate costs, ScriptFn script)
    : host_(host), costs_(std::move(costs)), script_(std::move(script)) {}

void SimulatedExecutor::Start(const Task& task, bool ends_visit, const std::atomic<bool>*) {
  Script script;
  if (script_) script = script_(task, runs_.load());
  if (script.cpu_seconds < 0) {
    // The estimate's cost of this task where it stands: with the visit's
    // preparation if it starts one.
    std::vector<Task> tasks;
    if (previous_) tasks.push_back(*previous_);
    tasks.push_back(task);
    std::vector<std::size_t> which = {tasks.size() - 1};
    if (previous_) which = {0, 1};
    const std::optional<double> both = costs_.Of(tasks, which);
    const std::optional<double> before = previous_ ? costs_.Of(tasks, {0}) : std::optional<double>(0.0);
    script.cpu_seconds = both && before ? *both - *before : 0;
  }
  previous_ = ends_visit ? std::nullopt : std::optional<Task>(task);
  remaining_ns_ = static_cast<std::int64_t>(script.cpu_seconds * kSimulatedSecond);
  result_ = ProbeRun{task.kind->Simulated(task.target, script.outcome, script.figure), script.cpu_seconds, 0};
  ++runs_;
}

bool SimulatedExecutor::Wait(std::chrono::milliseconds timeout) {
  const std::int64_t step =
      std::min<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count(), remaining_ns_);
  host_.Advance(step);
  remaining_ns_ -= step;
  return remaining_ns_ == 0;
}

}  // namespace numaprobe::daemon
