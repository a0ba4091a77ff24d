// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/rotation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "daemon/common/stable_hash.h"

namespace numaprobe::daemon {

namespace {

// Tasks in one class measure the same thing on different pairs: a
// regression that comes with a rollout moves them together. Runs between two
// CPUs are classed by how the two relate too (an SMT sibling and a CPU across
// the node are different things); -1: a run without a peer CPU.
using ClassKey = std::tuple<const ProbeKind*, int, int>;

ClassKey ClassOf(const Task& task, const kernels::Topology& topology) {
  const MemoryPair& p = task.target.pair;
  int distance = topology.Distance(p.cpu_node, p.mem_node);
  if (distance == 0) distance = p.cpu_node == p.mem_node ? 10 : 20;  // no SLIT: local or remote
  const int relation = task.target.peer_cpu < 0 ? -1 : static_cast<int>(task.target.relation);
  return {task.kind, distance, relation};
}

// The same pair (and peer CPU) of the same kind: a representative's variants
// (bandwidth ops, traffic mixes) all run every round.
bool SamePair(const Task& a, const Task& b) {
  return a.kind == b.kind && a.target.pair == b.target.pair && a.target.peer_cpu == b.target.peer_cpu;
}

// Per kind, the memory node each class's representative measures: as few
// nodes as cover every class (greedy, lowest node first on a tie), since each
// memory node a round visits costs a buffer preparation, which costs more
// than the measurements (performance.md, "Round cost on big hosts").
std::map<ClassKey, int> RepresentativeNodes(const std::vector<Task>& tasks, const kernels::Topology& topology) {
  std::map<const ProbeKind*, std::map<ClassKey, std::set<int>>> nodes_of;  // kind -> class -> memory nodes
  for (const Task& task : tasks) nodes_of[task.kind][ClassOf(task, topology)].insert(task.target.pair.mem_node);
  std::map<ClassKey, int> chosen;
  for (const auto& [kind, classes] : nodes_of) {
    std::map<ClassKey, std::set<int>> left = classes;
    while (!left.empty()) {
      std::map<int, int> covers;  // memory node -> classes it would cover
      for (const auto& [key, nodes] : left) {
        for (int node : nodes) ++covers[node];
      }
      const auto best = std::max_element(covers.begin(), covers.end(), [](const auto& a, const auto& b) {
        return a.second < b.second || (a.second == b.second && a.first > b.first);
      });
      for (auto it = left.begin(); it != left.end();) {
        if (it->second.contains(best->first)) {
          chosen[it->first] = best->first;
          it = left.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return chosen;
}

}  // namespace

std::size_t Rotation::rotated_tasks() const {
  std::size_t n = 0;
  for (const auto& visit : rotated) n += visit.size();
  return n;
}

Rotation SplitRound(std::vector<Task> tasks, const kernels::Topology& topology) {
  Rotation rotation;
  const std::map<ClassKey, int> node_of = RepresentativeNodes(tasks, topology);
  std::map<ClassKey, std::size_t> representative;  // class -> index of its first task
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const ClassKey key = ClassOf(tasks[i], topology);
    const auto it = representative.find(key);
    const bool first = it == representative.end() && tasks[i].target.pair.mem_node == node_of.at(key);
    if (first) representative.emplace(key, i);
    if (first || (it != representative.end() && SamePair(tasks[it->second], tasks[i]))) {
      rotation.every_round.push_back(i);
    } else if (!rotation.rotated.empty() && rotation.rotated.back().back() + 1 == i &&
               SharesBuffers(tasks[i - 1], tasks[i])) {
      rotation.rotated.back().push_back(i);
    } else {
      rotation.rotated.push_back({i});
    }
  }
  rotation.tasks = std::move(tasks);
  return rotation;
}

std::optional<double> FullRoundCpuSeconds(const Rotation& rotation, const TaskCostEstimate& costs) {
  std::vector<std::size_t> all(rotation.tasks.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return costs.Of(rotation.tasks, all);
}

int RotationRounds(const Rotation& rotation, const TaskCostEstimate& costs, double round_budget_cpu_seconds) {
  if (rotation.rotated.empty()) return 1;
  const std::optional<double> full = FullRoundCpuSeconds(rotation, costs);
  const std::optional<double> every = costs.Of(rotation.tasks, rotation.every_round);
  // Rotating re-prepares the representatives' buffers every round, so a
  // cycle costs more CPU than one full round: worth it only when the full
  // round would stretch well past the interval.
  if (!full || !every || *full <= kRotateAbove * round_budget_cpu_seconds) return 1;
  double rotated = 0;
  for (const auto& visit : rotation.rotated) {
    const std::optional<double> cost = costs.Of(rotation.tasks, visit);
    if (!cost) return 1;
    rotated += *cost;
  }
  // Each round gets what a full round may cost before rotating pays off, so
  // rounds last about kRotateAbove intervals: the representatives refresh at
  // that cadence, and the cycle (every pair) costs few extra preparations.
  const double room = std::max(kRotateAbove * round_budget_cpu_seconds - *every, round_budget_cpu_seconds);
  const double most = static_cast<double>(rotation.rotated.size());
  return static_cast<int>(std::clamp(std::ceil(rotated / room), 1.0, most));
}

std::vector<Task> Representatives(const Rotation& rotation) {
  std::vector<Task> tasks;
  tasks.reserve(rotation.every_round.size());
  for (std::size_t k : rotation.every_round) tasks.push_back(rotation.tasks[k]);
  return tasks;
}

std::string RotationSignature(const Rotation& rotation) {
  std::string text;
  for (const Task& task : rotation.tasks) {
    const ProbeTarget& t = task.target;
    text += fmt::format("{} {} {} {} {} {} {};", task.kind->name(), t.pair.cpu, t.pair.cpu_node, t.pair.mem_node,
                        t.peer_cpu, static_cast<int>(t.relation), t.variant);
  }
  return fmt::format("{:016x}", Fnv1a64(text));
}

std::vector<Task> RoundOfCycle(const Rotation& rotation, int rounds, int index) {
  const std::size_t n = rotation.rotated.size();
  const auto r = static_cast<std::size_t>(std::max(rounds, 1));
  const auto i = static_cast<std::size_t>(std::clamp(index, 0, static_cast<int>(r) - 1));
  std::vector<std::size_t> which = rotation.every_round;
  for (std::size_t visit = i * n / r; visit < (i + 1) * n / r; ++visit) {
    which.insert(which.end(), rotation.rotated[visit].begin(), rotation.rotated[visit].end());
  }
  std::sort(which.begin(), which.end());
  std::vector<Task> tasks;
  tasks.reserve(which.size());
  for (std::size_t k : which) tasks.push_back(rotation.tasks[k]);
  return tasks;
}

}  // namespace numaprobe::daemon
