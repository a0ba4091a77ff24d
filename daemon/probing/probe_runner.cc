#include "daemon/probing/probe_runner.h"

#include <algorithm>

namespace numaprobe::daemon {

bool IsPlacementOutcome(kernels::Outcome outcome) {
  return outcome == kernels::Outcome::kPlacementMismatch || outcome == kernels::Outcome::kPlacementUnverified;
}

std::vector<int> ProbeRunner::NodeCpus(const MemoryPair& pair, int count) const {
  std::vector<int> cpus{pair.cpu};
  const kernels::NodeInfo* node = topology_.FindNode(pair.cpu_node);
  if (node == nullptr || count <= 1) return cpus;
  std::vector<int> candidates(node->cpus.rbegin(), node->cpus.rend());
  std::stable_partition(candidates.begin(), candidates.end(), [&](int cpu) {
    return std::none_of(cpus.begin(), cpus.end(), [&](int taken) {
      return topology_.Relation(cpu, taken) == kernels::CpuRelation::kSmt;
    });
  });
  for (int cpu : candidates) {
    if (static_cast<int>(cpus.size()) >= count) break;
    if (cpu != pair.cpu) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace numaprobe::daemon
