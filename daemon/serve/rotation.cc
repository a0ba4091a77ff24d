#include "daemon/serve/rotation.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace numaprobe::daemon {

namespace {

// Tasks in one class measure the same thing on different pairs: a
// regression that comes with a rollout moves them together.
using ClassKey = std::tuple<const ProbeKind*, int, kernels::CpuRelation>;

ClassKey ClassOf(const Task& task, const kernels::Topology& topology) {
  const MemoryPair& p = task.target.pair;
  int distance = topology.Distance(p.cpu_node, p.mem_node);
  if (distance == 0) distance = p.cpu_node == p.mem_node ? 10 : 20;  // no SLIT: local or remote
  return {task.kind, distance, task.target.c2c.relation};
}

// The same pair of the same kind: a representative's variants (bandwidth ops,
// traffic mixes) all run every round.
bool SamePair(const Task& a, const Task& b) {
  return a.kind == b.kind && a.target.pair == b.target.pair && a.target.c2c == b.target.c2c;
}

}  // namespace

std::size_t Rotation::rotated_tasks() const {
  std::size_t n = 0;
  for (const auto& pair : rotated) n += pair.size();
  return n;
}

Rotation SplitRound(std::vector<Task> tasks, const kernels::Topology& topology) {
  Rotation rotation;
  std::map<ClassKey, std::size_t> representative;  // class -> index of its first task
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto [it, first] = representative.try_emplace(ClassOf(tasks[i], topology), i);
    if (first || SamePair(tasks[it->second], tasks[i])) {
      rotation.every_round.push_back(i);
    } else if (!rotation.rotated.empty() && rotation.rotated.back().back() + 1 == i &&
               SamePair(tasks[i - 1], tasks[i])) {
      rotation.rotated.back().push_back(i);
    } else {
      rotation.rotated.push_back({i});
    }
  }
  rotation.tasks = std::move(tasks);
  return rotation;
}

void TaskCostEstimate::Observe(const ProbeKind* kind, double cpu_seconds) {
  // An exponential average: recent runs count most (a reload may change the
  // settings), one odd run does not decide the schedule.
  const auto [it, first] = seconds_.try_emplace(kind, cpu_seconds);
  if (!first) it->second = 0.7 * it->second + 0.3 * cpu_seconds;
}

std::optional<double> TaskCostEstimate::Of(const std::vector<Task>& tasks,
                                           const std::vector<std::size_t>& which) const {
  double total = 0;
  for (std::size_t i : which) {
    const auto it = seconds_.find(tasks[i].kind);
    if (it == seconds_.end()) return std::nullopt;
    total += it->second;
  }
  return total;
}

std::optional<double> TaskCostEstimate::Of(const Rotation& rotation) const {
  double total = 0;
  for (const auto& pair : rotation.rotated) {
    const std::optional<double> cost = Of(rotation.tasks, pair);
    if (!cost) return std::nullopt;
    total += *cost;
  }
  return total;
}

int RotationRounds(const Rotation& rotation, const TaskCostEstimate& costs, double round_budget_cpu_seconds) {
  if (rotation.rotated.empty()) return 1;
  const std::optional<double> every = costs.Of(rotation.tasks, rotation.every_round);
  const std::optional<double> rotated = costs.Of(rotation);
  if (!every || !rotated || *every + *rotated <= round_budget_cpu_seconds) return 1;
  const double room = std::max(round_budget_cpu_seconds - *every, round_budget_cpu_seconds / 4);
  const double most = static_cast<double>(rotation.rotated.size());
  const double rounds = room > 0 ? std::ceil(*rotated / room) : most;
  return static_cast<int>(std::clamp(rounds, 1.0, most));
}

std::vector<Task> RoundOfCycle(const Rotation& rotation, int rounds, int index) {
  const std::size_t n = rotation.rotated.size();
  const auto r = static_cast<std::size_t>(std::max(rounds, 1));
  const auto i = static_cast<std::size_t>(std::clamp(index, 0, static_cast<int>(r) - 1));
  std::vector<std::size_t> which = rotation.every_round;
  for (std::size_t pair = i * n / r; pair < (i + 1) * n / r; ++pair) {
    which.insert(which.end(), rotation.rotated[pair].begin(), rotation.rotated[pair].end());
  }
  std::sort(which.begin(), which.end());
  std::vector<Task> tasks;
  tasks.reserve(which.size());
  for (std::size_t k : which) tasks.push_back(rotation.tasks[k]);
  return tasks;
}

}  // namespace numaprobe::daemon
