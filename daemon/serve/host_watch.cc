// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/host_watch.h"

#include <spdlog/spdlog.h>

#include <set>

namespace numaprobe::daemon {

std::map<int, std::vector<int>> ProbeCpusByNode(const std::vector<ProbeTarget>& targets,
                                                const kernels::Topology& topology) {
  std::map<int, std::set<int>> cpus;
  const auto node_of = [&](int cpu) {
    for (const auto& c : topology.cpus()) {
      if (c.id == cpu) return c.node;
    }
    return -1;
  };
  for (const ProbeTarget& target : targets) {
    const MemoryPair& p = target.pair;
    if (p.any_cpu_of_node) {
      for (const auto& node : topology.nodes()) {
        if (node.id == p.cpu_node) cpus[p.cpu_node].insert(node.cpus.begin(), node.cpus.end());
      }
    } else if (const int node = node_of(p.cpu); node >= 0) {
      cpus[node].insert(p.cpu);
    }
    if (const int node = node_of(target.peer_cpu); target.peer_cpu >= 0 && node >= 0)
      cpus[node].insert(target.peer_cpu);
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
