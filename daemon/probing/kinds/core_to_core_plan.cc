// SPDX-License-Identifier: Apache-2.0
// PlanC2cPairs (rules in core_to_core_plan.h). Deterministic and preferring the
// highest-numbered CPUs, as the memory plan does (probing/plan.cc), so the same
// machine always yields the same pairs and therefore the same metric series.
#include "daemon/probing/kinds/core_to_core_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using k::CpuRelation;

void AddC2cPair(int a, int b, int line_node, CpuRelation relation, std::vector<C2cPair>& pairs) {
  if (line_node < 0) return;
  const C2cPair pair{std::min(a, b), std::max(a, b), line_node, relation};
  if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
}

// The pair of `relation` with the highest CPUs: in each group, its highest CPU
// and the highest other CPU related to it that way. High CPUs as in
// RepresentativeCpu; taking the group's top CPU loses nothing, since if no CPU
// relates to it that way, none in the group relates so to any other either.
std::optional<std::pair<int, int>> PickPair(const std::map<int, std::vector<int>>& groups, CpuRelation relation,
                                            const k::Topology& topology) {
  std::optional<std::pair<int, int>> best;
  for (const auto& [key, cpus] : groups) {
    const int b = cpus.back();
    for (auto it = cpus.rbegin() + 1; it != cpus.rend(); ++it) {
      if (topology.Relation(*it, b) != relation) continue;
      if (!best || std::tie(b, *it) > std::tie(best->second, best->first)) best = std::pair(*it, b);
      break;
    }
  }
  return best;
}

std::vector<C2cPair> DefaultC2cPairs(const k::Topology& topology, std::vector<std::string>& notes) {
  std::vector<C2cPair> pairs;
  if (topology.cpus().size() < 2) {
    notes.push_back("only one allowed CPU: no core-to-core pairs");
    return pairs;
  }
  const auto by_node = GroupCpus(topology, &k::CpuInfo::node);
  const std::pair<CpuRelation, std::map<int, std::vector<int>>> classes[] = {
      {CpuRelation::kSmt, GroupCpus(topology, &k::CpuInfo::core)},
      {CpuRelation::kSameLlc, GroupCpus(topology, &k::CpuInfo::llc)},
      {CpuRelation::kSameNode, by_node},
  };
  std::vector<std::string> missing;
  for (const auto& [relation, groups] : classes) {
    if (const auto pair = PickPair(groups, relation, topology)) {
      AddC2cPair(pair->first, pair->second, MemoryHome(topology.FindCpu(pair->first)->node, topology), relation, pairs);
    } else {
      missing.emplace_back(k::CpuRelationName(relation));
    }
  }
  // Cross-node transfers go through the line's home agent, so the home node
  // changes the result up to 2x: measure each node pair with the line on each side.
  for (auto a = by_node.begin(); a != by_node.end(); ++a) {
    for (auto b = std::next(a); b != by_node.end(); ++b) {
      const int cpu_a = a->second.back();
      const int cpu_b = b->second.back();
      AddC2cPair(cpu_a, cpu_b, MemoryHome(a->first, topology), CpuRelation::kCrossNode, pairs);
      AddC2cPair(cpu_a, cpu_b, MemoryHome(b->first, topology), CpuRelation::kCrossNode, pairs);
    }
  }
  if (by_node.size() < 2) missing.emplace_back(k::CpuRelationName(CpuRelation::kCrossNode));
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing) list += (list.empty() ? "" : ", ") + name;
    notes.push_back("c2c classes without an allowed CPU pair: " + list);
  }
  return pairs;
}

}  // namespace

ProbeTarget C2cTarget(const C2cPair& pair, int cpu_a_node) {
  ProbeTarget target;
  target.pair = {pair.cpu_a, cpu_a_node, pair.line_node};
  target.peer_cpu = pair.cpu_b;
  target.relation = pair.relation;
  return target;
}

C2cPair C2cPairOf(const ProbeTarget& target) {
  return {target.pair.cpu, target.peer_cpu, target.pair.mem_node, target.relation};
}

k::Expected<std::vector<C2cPair>> PlanC2cPairs(const std::vector<int>& cpus, const k::Topology& topology,
                                               std::vector<std::string>& notes) {
  if (cpus.empty()) return DefaultC2cPairs(topology, notes);
  auto checked = CheckedCpus(cpus, topology);
  if (!checked.ok()) return checked.failure();
  const std::vector<int>& c2c = checked.value();
  if (c2c.size() < 2) return k::Failure{k::Outcome::kInvalidSpec, "c2c needs at least two distinct CPUs"};
  std::vector<C2cPair> pairs;
  for (std::size_t i = 0; i < c2c.size(); ++i) {
    for (std::size_t j = i + 1; j < c2c.size(); ++j) {
      AddC2cPair(c2c[i], c2c[j], MemoryHome(topology.FindCpu(c2c[i])->node, topology),
                 topology.Relation(c2c[i], c2c[j]), pairs);
    }
  }
  return pairs;
}

}  // namespace numaprobe::daemon
