// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/kinds/interleave_result.h"

#include <fmt/format.h>

namespace numaprobe::daemon {

std::optional<std::string> NotPlannedReason(const std::vector<int>& memory_nodes,
                                            const std::optional<WeightedInterleave>& current,
                                            const std::string& refusal) {
  if (memory_nodes.size() < 2) {
    return fmt::format("{} memory node{}: a one-node host has nothing to interleave", memory_nodes.size(),
                       memory_nodes.size() == 1 ? "" : "s");
  }
  if (!current) {
    return std::string(
        "this kernel has no weighted interleave (no /sys/kernel/mm/mempolicy/weighted_interleave; Linux 6.9+)");
  }
  if (!refusal.empty()) return "this kernel refuses weighted interleave (Linux 6.9+): " + refusal;
  return std::nullopt;
}

InterleaveWeightsNow WeightsOf(const std::vector<int>& memory_nodes, const std::optional<WeightedInterleave>& current) {
  InterleaveWeightsNow now;
  if (!current) {
    now.problem = "no /sys/kernel/mm/mempolicy/weighted_interleave";
    return now;
  }
  for (const int node : memory_nodes) {
    const auto it = current->weights.find(node);
    if (it == current->weights.end()) {
      now.weights.clear();
      now.problem = fmt::format("no readable weight for node {} (/sys/kernel/mm/mempolicy/weighted_interleave/node{})",
                                node, node);
      return now;
    }
    now.weights[node] = it->second;
  }
  return now;
}

std::optional<BestNodePeak> BestNodePeakOf(const std::vector<RecordPtr>& records, int cpu_node) {
  std::optional<BestNodePeak> best;
  for (const RecordPtr& record : records) {
    if (!record->ok() || record->target().pair.cpu_node != cpu_node) continue;
    const std::optional<AdvertisedFigure> figure = record->kind().AdvertisedOf(*record);
    if (!figure || !figure->whole_node || figure->attribute != HmatAttribute::kReadBandwidth) continue;
    if (!best || figure->value > best->bytes_per_second) {
      best = BestNodePeak{record->target().pair.mem_node, figure->value};
    }
  }
  return best;
}

std::optional<double> GainOf(const InterleaveResult& result) {
  if (!result.best_node || result.best_node->bytes_per_second <= 0) return std::nullopt;
  return result.bytes_per_second.median / result.best_node->bytes_per_second;
}

}  // namespace numaprobe::daemon
