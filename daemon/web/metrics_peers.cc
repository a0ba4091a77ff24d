// Each host's remote/local ratios of the peer medians (the medians of each
// series' last 9 figures, Snapshot::peer_medians), with the labels of
// its peer cohort: what the peer alert compares across hosts. The rules could
// compute the ratio from the recent medians and the SLIT distances and join
// the cohort on it, but that reads every pair of every host eight times a
// minute (7-9 s of rule evaluation at 1,000 8-node hosts, docs/detection.md);
// with the ratio and its cohort here, the cohort median is one read and each
// host's largest deviation from it another.
#include <map>
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "daemon/web/pair_medians.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// Remote pairs only: a local pair's ratio is 1 on every host and tells the
// peers nothing. The denominator is the CPU node's own memory (mem_node ==
// cpu_node, SLIT distance 10); a CPU node without a peer median there (a
// CPU-only node, or figures still coming) has no ratio.
void AppendRemoteLocalRatio(const Snapshot& s, const ProbeKind& kind, std::vector<MetricFamily>& out) {
  FamilyBuilder family(
      kind.BaselineNames().stem + "_recent_remote_local_ratio",
      "Per remote node pair, the median of its last 9 successful figures over that of its CPU node's local pair "
      "(in per-CPU mode each the median over the node's CPUs; absent until both have 9 since start or the last "
      "replan), labelled with the host's peer cohort (cpu_model, numa_nodes, "
      "numa_distance_sum): what the peer alert compares with the same pair on the cohort's other hosts.",
      MetricType::Gauge);
  const Labels cohort = CohortLabels(s);
  const std::map<PairKey, double> medians = PairMedians(s.peer_medians, kind);
  for (const auto& [key, value] : medians) {
    const auto& [cpu_node, mem_node, op] = key;
    if (cpu_node == mem_node) continue;
    const auto local = medians.find({cpu_node, cpu_node, op});
    if (local == medians.end() || local->second <= 0) continue;
    Labels labels = cohort;
    labels["cpu_node"] = Id(cpu_node);
    labels["mem_node"] = Id(mem_node);
    if (!op.empty()) labels["op"] = op;
    family.Add(labels, value / local->second);
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
    if (kind->ComparedWithPeers() && kind->HasBaseline()) AppendRemoteLocalRatio(s, *kind, out);
  }
}

}  // namespace numaprobe::daemon
