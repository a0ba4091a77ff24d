// SPDX-License-Identifier: Apache-2.0
// The host's measured NUMA figures as Node Feature Discovery features: what
// Kubernetes can schedule on (NFD turns them into node labels; a
// NodeFeatureRule or a pod's node affinity compares them with Gt/Lt, which
// take integers only, so every figure is a whole number: ns, MB/s, percent).
//
// The figures come from the published records by their roles, not by kind
// names (ProbeKind::AdvertisedOf): idle latency is the read-latency figure of
// one thread, peak bandwidth the whole-node read-bandwidth figure. Per CPU
// node the local pair is its own memory; over the host, each feature is the
// worst: the slowest local latency, the slowest remote latency, the lowest
// local and remote peak bandwidth, the highest remote/local latency ratio,
// the lowest remote/local bandwidth ratio. A feature whose figures are not
// (yet) published is left out, never guessed. In per-CPU mode a pair's worst
// CPU stands for it.
//
// Labels (docs/metrics.md, "Node features"), all in the numaprobe.io namespace:
//   latency-local-ns, latency-remote-worst-ns, latency-remote-local-pct,
//   bandwidth-local-mbps, bandwidth-remote-worst-mbps, bandwidth-remote-local-pct,
//   drift-alerts-armed (true/false);
// and, as raw features without labels (NFD's `# +no-label`: a NodeFeatureRule
// can match them, the node does not carry C x M labels), the measured distance
// matrix on the SLIT scale: distance-<cpu_node>-<mem_node>.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

inline constexpr std::string_view kNodeFeatureNamespace = "numaprobe.io";

struct NodeFeature {
  std::string name;   // within the namespace: "latency-local-ns"
  std::string value;  // an integer, or true/false
  bool label = true;  // false: a raw feature for NodeFeatureRules only
  bool operator==(const NodeFeature&) const = default;
};

// The features of `records` (the published successful records), in a fixed order.
std::vector<NodeFeature> NodeFeaturesOf(const std::vector<RecordPtr>& records, bool drift_alerts_armed);

// NFD's local feature file: a comment naming the writer, `# +expiry-time=`
// (RFC 3339, UTC) so that a stopped daemon's labels lapse, then
// `<namespace>/<name>=<value>` lines, each raw feature after `# +no-label`.
std::string NodeFeatureFileText(const std::vector<NodeFeature>& features, double expiry_unix_seconds);

}  // namespace numaprobe::daemon
