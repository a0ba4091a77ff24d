#include "daemon/serve/host_watch.h"

#include <spdlog/spdlog.h>

#include <set>

namespace numaprobe::daemon {

std::map<int, std::vector<int>> ProbeCpusByNode(const Plan& plan, const kernels::Topology& topology) {
  std::map<int, std::set<int>> cpus;
  const auto node_of = [&](int cpu) {
    for (const auto& c : topology.cpus()) {
      if (c.id == cpu) return c.node;
    }
    return -1;
  };
  for (const MemoryPair& p : plan.memory_pairs) {
    if (!p.any_cpu_of_node) {
      cpus[p.cpu_node].insert(p.cpu);
      continue;
    }
    for (const auto& node : topology.nodes()) {
      if (node.id == p.cpu_node) cpus[p.cpu_node].insert(node.cpus.begin(), node.cpus.end());
    }
  }
  for (const C2cPair& p : plan.c2c_pairs) {
    for (const int cpu : {p.cpu_a, p.cpu_b}) {
      if (const int node = node_of(cpu); node >= 0) cpus[node].insert(cpu);
    }
  }
  std::map<int, std::vector<int>> out;
  for (const auto& [node, set] : cpus) out[node].assign(set.begin(), set.end());
  return out;
}

HostInfo HostWatch::ReadInfo(const std::string& cpu_model) const {
  return ReadHostInfo(cpu_model, roots_.proc, roots_.sys);
}

HostObservation HostWatch::Observe(std::map<std::string, std::string> static_facts,
                                   const std::map<int, std::vector<int>>& probe_cpus) {
  last_ = ReadRuntimeFacts(roots_, probe_cpus);
  const std::set<std::string> unknown(last_.unknown.begin(), last_.unknown.end());
  for (const std::string& field : unknown) {
    if (unknown_logged_.insert(field).second) {
      spdlog::info("host fact {} cannot be read on this host (file missing or unreadable): exported as unknown", field);
    }
  }
  // Readable again: a later loss is logged again.
  std::erase_if(unknown_logged_, [&](const std::string& field) { return !unknown.contains(field); });
  for (const auto& [field, value] : last_.fields) static_facts[field] = value;
  return HostObservation(std::move(static_facts), last_.memory_errors);
}

}  // namespace numaprobe::daemon
