// SPDX-License-Identifier: Apache-2.0
// Interleave weights (output/interleave_weights.h): per CPU node the weights
// the kernel uses now, those its own reduction gives from the firmware's
// figures and from the measured peak bandwidth, and what an interleaved
// allocation would lose with the kernel's. Bounded per host: four weights
// per CPU node and memory node, one ratio per CPU node; no series on a host
// with one memory node or a kernel before 6.9 (kernel) or without peak
// figures (measured).
#include <string>
#include <vector>

#include "daemon/output/interleave_weights.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"

namespace numaprobe::daemon {

using prometheus::MetricFamily;
using prometheus::MetricType;

InterleaveHost InterleaveHostOf(const Snapshot& s) {
  InterleaveHost host{{}, {}, s.distances, s.host.hmat, s.runtime_facts.weighted_interleave};
  for (const NodeMemory& n : s.runtime_facts.nodes) {
    if (n.mem_total_bytes && *n.mem_total_bytes > 0) host.memory_nodes.push_back(n.node);
  }
  // The planned pairs start at the CPU nodes that probe.
  for (const auto& [pair, distance] : s.distances) {
    if (host.cpu_nodes.empty() || host.cpu_nodes.back() != pair.first) host.cpu_nodes.push_back(pair.first);
  }
  return host;
}

void AppendInterleaveFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder weight(
      "numaprobe_interleave_weight",
      "MPOL_WEIGHTED_INTERLEAVE weight of mem_node for allocations from cpu_node (pages of the node per round), by "
      "source: kernel (in use now, weighted_interleave/nodeN), firmware (the kernel's auto-mode reduction of the "
      "HMAT bandwidth), measured_nearest (the same reduction of each node's min(read, write) peak bandwidth from its "
      "nearest CPU node: what auto mode would set from true figures), all three the same for every CPU node; "
      "measured (the same reduction of cpu_node's own peak bandwidth to each node: a package-aware vector).",
      MetricType::Gauge);
  FamilyBuilder ratio("numaprobe_interleave_bandwidth_ratio",
                      "Bandwidth of an interleaved all-core stream from cpu_node with the kernel's weights over that "
                      "with the measured_nearest weights, both on cpu_node's measured peak bandwidths (each node "
                      "serving its share of the pages); below 1 the kernel's weights leave bandwidth unused that "
                      "its own rule on measured figures would not.",
                      MetricType::Gauge);
  std::vector<RecordPtr> records;
  for (const Timed& t : s.figures) records.push_back(t.record);
  const InterleaveHost host = InterleaveHostOf(s);
  for (const InterleaveWeights& w : InterleaveWeightsOf(records, host)) {
    for (const auto& [source, weights] : {std::pair{"measured", &w.measured},
                                          {"measured_nearest", &w.measured_nearest},
                                          {"kernel", &w.kernel},
                                          {"firmware", &w.firmware}}) {
      for (const auto& [mem_node, value] : *weights) {
        weight.Add({{"cpu_node", Id(w.cpu_node)}, {"mem_node", Id(mem_node)}, {"source", source}}, value);
      }
    }
    if (w.kernel_over_nearest) ratio.Add({{"cpu_node", Id(w.cpu_node)}}, *w.kernel_over_nearest);
  }
  out.push_back(weight.Build());
  out.push_back(ratio.Build());
}

}  // namespace numaprobe::daemon
