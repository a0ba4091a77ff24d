// BuildPlan (rules in plan.h). Every choice is deterministic, preferring the
// highest-numbered CPUs as RepresentativeCpu does, so the same machine always
// yields the same plan and therefore the same metric series across restarts.
#include "daemon/probing/plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "kernels/cpulist.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using k::CpuRelation;
using k::Failure;
using k::Outcome;

// "cpu 4" / "cpus 4-7": notes name sets the way sysfs does.
std::string Named(std::string_view noun, const std::vector<int>& ids) {
  std::string out(noun);
  if (ids.size() > 1) out += 's';
  return out + ' ' + k::FormatCpuList(ids);
}

std::optional<Failure> CheckCpu(int cpu, const k::Topology& topology) {
  if (topology.FindCpu(cpu) != nullptr) return std::nullopt;
  const std::string name = "cpu " + std::to_string(cpu);
  if (k::ListHas(topology.disallowed_cpus(), cpu)) {
    return Failure{Outcome::kNotAllowed, name + " is not in this process's affinity mask or is offline"};
  }
  std::vector<int> all = topology.disallowed_cpus();
  for (const k::CpuInfo& info : topology.cpus()) all.push_back(info.id);
  std::sort(all.begin(), all.end());
  return Failure{Outcome::kInvalidSpec, name + " does not exist (this machine has CPUs " + k::FormatCpuList(all) + ")"};
}

std::optional<Failure> CheckMemNode(int id, const k::Topology& topology) {
  const std::string name = "node " + std::to_string(id);
  const k::NodeInfo* node = topology.FindNode(id);
  if (node == nullptr) {
    if (k::ListHas(topology.disallowed_nodes(), id)) {
      return Failure{Outcome::kNotAllowed, name + " is not in this process's allowed memory nodes (cpuset.mems)"};
    }
    return Failure{Outcome::kInvalidSpec, name + " does not exist"};
  }
  if (!node->has_memory()) return Failure{Outcome::kInvalidSpec, name + " has no memory"};
  return std::nullopt;
}

// Sorted, duplicate-free ids that all pass `check`, or the first failure.
k::Expected<std::vector<int>> Checked(std::vector<int> ids, const k::Topology& topology,
                                      std::optional<Failure> (*check)(int, const k::Topology&)) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int id : ids) {
    if (auto failure = check(id, topology)) return *std::move(failure);
  }
  return ids;
}

// Allowed CPUs grouped by a key (core, LLC, node), each group ascending.
// Negative keys mean "unknown" and form no group.
std::map<int, std::vector<int>> GroupCpus(const k::Topology& topology, int k::CpuInfo::*key) {
  std::map<int, std::vector<int>> groups;
  for (const k::CpuInfo& cpu : topology.cpus()) {
    if (cpu.*key >= 0) groups[cpu.*key].push_back(cpu.id);
  }
  return groups;
}

// Where a line or buffer "on node n" can actually live: n itself when we may
// allocate there, else the nearest node we may allocate on (-1: none).
int MemoryHome(int node, const k::Topology& topology) {
  if (const k::NodeInfo* info = topology.FindNode(node); info != nullptr && info->has_memory()) return node;
  int best = -1;
  for (const k::NodeInfo& candidate : topology.nodes()) {
    if (!candidate.has_memory()) continue;
    if (best < 0 || topology.Distance(node, candidate.id) < topology.Distance(node, best)) best = candidate.id;
  }
  return best;
}

std::vector<int> MeasuringCpus(const PlanOptions& options, const k::Topology& topology) {
  if (options.per_cpu) {
    std::vector<int> all;
    for (const k::CpuInfo& cpu : topology.cpus()) all.push_back(cpu.id);
    return all;
  }
  // Grouped by each CPU's own node rather than by nodes(), so CPUs whose node's
  // memory is outside cpuset.mems still measure the nodes we may use. For an
  // allowed node the highest CPU is RepresentativeCpu(node).
  std::vector<int> representatives;
  for (const auto& [node, cpus] : GroupCpus(topology, &k::CpuInfo::node)) representatives.push_back(cpus.back());
  return representatives;
}

void AddMemoryPairs(const std::vector<int>& cpus, const std::vector<int>& mem_nodes, bool any_cpu_of_node,
                    const k::Topology& topology, Plan& plan) {
  for (int cpu : cpus) {
    for (int mem_node : mem_nodes) {
      plan.memory_pairs.push_back({cpu, topology.FindCpu(cpu)->node, mem_node, any_cpu_of_node});
    }
  }
  std::sort(plan.memory_pairs.begin(), plan.memory_pairs.end(), [](const MemoryPair& a, const MemoryPair& b) {
    return std::tie(a.cpu_node, a.mem_node, a.cpu) < std::tie(b.cpu_node, b.mem_node, b.cpu);
  });
}

void AddNotes(const PlanOptions& options, const std::vector<int>& mem_nodes, const k::Topology& topology, Plan& plan) {
  for (const k::NodeInfo& node : topology.nodes()) {
    const std::string name = "node " + std::to_string(node.id);
    if (node.cpus.empty() && k::ListHas(mem_nodes, node.id)) {
      plan.notes.push_back(name + ": no CPUs (memory only): measured from the other nodes' CPUs");
    }
    if (!node.has_memory() && options.mem_nodes.empty()) {
      plan.notes.push_back(name + ": no memory: not a memory target");
    }
  }
  if (!topology.disallowed_cpus().empty()) {
    plan.notes.push_back(Named("cpu", topology.disallowed_cpus()) + " not allowed (affinity/cpuset) or offline");
  }
  if (!topology.disallowed_nodes().empty()) {
    plan.notes.push_back(Named("node", topology.disallowed_nodes()) + " not allowed (cpuset.mems)");
  }
}

void AddC2cPair(int a, int b, int line_node, CpuRelation relation, Plan& plan) {
  if (line_node < 0) return;
  const C2cPair pair{std::min(a, b), std::max(a, b), line_node, relation};
  if (std::find(plan.c2c_pairs.begin(), plan.c2c_pairs.end(), pair) == plan.c2c_pairs.end()) {
    plan.c2c_pairs.push_back(pair);
  }
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

void AddDefaultC2cPairs(const k::Topology& topology, Plan& plan) {
  if (topology.cpus().size() < 2) {
    plan.notes.push_back("only one allowed CPU: no core-to-core pairs");
    return;
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
      AddC2cPair(pair->first, pair->second, MemoryHome(topology.FindCpu(pair->first)->node, topology), relation, plan);
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
      AddC2cPair(cpu_a, cpu_b, MemoryHome(a->first, topology), CpuRelation::kCrossNode, plan);
      AddC2cPair(cpu_a, cpu_b, MemoryHome(b->first, topology), CpuRelation::kCrossNode, plan);
    }
  }
  if (by_node.size() < 2) missing.emplace_back(k::CpuRelationName(CpuRelation::kCrossNode));
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing) list += (list.empty() ? "" : ", ") + name;
    plan.notes.push_back("c2c classes without an allowed CPU pair: " + list);
  }
}

}  // namespace

int RepresentativeCpu(const kernels::NodeInfo& node) {
  return node.cpus.empty() ? -1 : *std::max_element(node.cpus.begin(), node.cpus.end());
}

kernels::Expected<Plan> BuildPlan(const PlanOptions& options, const kernels::Topology& topology) {
  Plan plan;
  std::vector<int> cpus;
  if (!options.cpus.empty()) {
    auto checked = Checked(options.cpus, topology, CheckCpu);
    if (!checked.ok()) return checked.failure();
    cpus = std::move(checked).value();
  } else {
    cpus = MeasuringCpus(options, topology);
  }

  std::vector<int> mem_nodes;
  if (!options.mem_nodes.empty()) {
    auto checked = Checked(options.mem_nodes, topology, CheckMemNode);
    if (!checked.ok()) return checked.failure();
    mem_nodes = std::move(checked).value();
  } else {
    for (const k::NodeInfo& node : topology.nodes()) {
      if (node.has_memory()) mem_nodes.push_back(node.id);
    }
  }
  AddMemoryPairs(cpus, mem_nodes, options.cpus.empty() && !options.per_cpu, topology, plan);
  AddNotes(options, mem_nodes, topology, plan);
  if (mem_nodes.empty()) plan.notes.push_back("no allowed node with memory: no memory pairs");

  if (!options.c2c_cpus.empty()) {
    auto checked = Checked(options.c2c_cpus, topology, CheckCpu);
    if (!checked.ok()) return checked.failure();
    const std::vector<int>& c2c = checked.value();
    if (c2c.size() < 2) return Failure{Outcome::kInvalidSpec, "c2c needs at least two distinct CPUs"};
    for (std::size_t i = 0; i < c2c.size(); ++i) {
      for (std::size_t j = i + 1; j < c2c.size(); ++j) {
        AddC2cPair(c2c[i], c2c[j], MemoryHome(topology.FindCpu(c2c[i])->node, topology),
                   topology.Relation(c2c[i], c2c[j]), plan);
      }
    }
  } else {
    AddDefaultC2cPairs(topology, plan);
  }
  return plan;
}

}  // namespace numaprobe::daemon
