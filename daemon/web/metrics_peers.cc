// SPDX-License-Identifier: Apache-2.0
// Each host's remote/local ratios of the peer medians (computed by
// serve/results/derived.cc), with the labels of its peer cohort: what the
// peer alert compares across hosts. With the ratio and its cohort here, the
// cohort median is one read of the rules and each host's largest deviation
// from it another.
#include <map>
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// Each remote pair's ratio (serve/results/derived.cc), with the cohort labels.
void AppendRemoteLocalRatio(const Snapshot& s, const ProbeKind& kind, std::vector<MetricFamily>& out) {
  FamilyBuilder family(
      kind.traits().baseline_names.stem + "_recent_remote_local_ratio",
      "Per remote node pair (cpu_node to mem_node), the median of its last 9 successful figures over that of its "
      "CPU node's local pair "
      "(in per-CPU mode each the median over the node's CPUs; absent until both have 9), labelled with the host's "
      "peer cohort (cpu_model, numa_nodes, numa_distance_sum): what the peer alert compares with the same pair on "
      "the cohort's other hosts.",
      MetricType::Gauge);
  const Labels cohort = CohortLabels(s);
  for (const PairRatio& r : s.remote_local_ratios) {
    if (r.probe != kind.name()) continue;
    Labels labels = cohort;
    labels["cpu_node"] = Id(r.cpu_node);
    labels["mem_node"] = Id(r.mem_node);
    if (!r.op.empty()) labels["op"] = r.op;
    family.Add(labels, r.ratio);
  }
  out.push_back(family.Build());
}

}  // namespace

Labels CohortLabels(const Snapshot& s) {
  int local_pairs = 0;
  long distance_sum = 0;
  for (const auto& [pair, distance] : s.distances) {
    distance_sum += distance;
    if (distance == 10) ++local_pairs;
  }
  return {{"cpu_model", s.host.cpu_model},
          {"numa_nodes", std::to_string(local_pairs)},
          {"numa_distance_sum", std::to_string(distance_sum)}};
}

void AppendPeerFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->traits().compared_with_peers && kind->traits().has_baseline) AppendRemoteLocalRatio(s, *kind, out);
  }
}

}  // namespace numaprobe::daemon
