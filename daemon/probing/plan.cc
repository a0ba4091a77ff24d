// SPDX-License-Identifier: Apache-2.0
// BuildPlan (rules in plan.h). Every choice is deterministic, preferring the
// highest-numbered CPUs as RepresentativeCpu does, so the same machine always
// yields the same plan and therefore the same metric series across restarts.
#include "daemon/probing/plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "daemon/probing/probe_table.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
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

}  // namespace

const std::vector<ProbeTarget>& Plan::TargetsOf(std::string_view kind) const {
  static const std::vector<ProbeTarget> kNone;
  const auto it = kind_targets.find(kind);
  return it == kind_targets.end() ? kNone : it->second;
}

int RepresentativeCpu(const kernels::NodeInfo& node) {
  return node.cpus.empty() ? -1 : *std::max_element(node.cpus.begin(), node.cpus.end());
}

kernels::Expected<std::vector<int>> CheckedCpus(std::vector<int> cpus, const kernels::Topology& topology) {
  return Checked(std::move(cpus), topology, CheckCpu);
}

std::map<int, std::vector<int>> GroupCpus(const k::Topology& topology, int k::CpuInfo::*key) {
  std::map<int, std::vector<int>> groups;
  for (const k::CpuInfo& cpu : topology.cpus()) {
    if (cpu.*key >= 0) groups[cpu.*key].push_back(cpu.id);
  }
  return groups;
}

int MemoryHome(int node, const k::Topology& topology) {
  if (const k::NodeInfo* info = topology.FindNode(node); info != nullptr && info->has_memory()) return node;
  int best = -1;
  for (const k::NodeInfo& candidate : topology.nodes()) {
    if (!candidate.has_memory()) continue;
    if (best < 0 || topology.Distance(node, candidate.id) < topology.Distance(node, best)) best = candidate.id;
  }
  return best;
}

kernels::Expected<Plan> BuildPlan(const PlanOptions& options, const kernels::Topology& topology) {
  Plan plan;
  std::vector<int> cpus;
  if (!options.cpus.empty()) {
    auto checked = CheckedCpus(options.cpus, topology);
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

  for (const ProbeKind* kind : ProbeTable()) {
    auto targets = kind->PlanTargets(options, topology, plan.notes);
    if (!targets.ok()) return targets.failure();
    if (!targets.value().empty()) plan.kind_targets.emplace(kind->name(), std::move(targets).value());
  }
  return plan;
}

}  // namespace numaprobe::daemon
