// SPDX-License-Identifier: Apache-2.0
// The interleave_bandwidth kind's result (kinds/interleave_bandwidth.cc) and
// what it needs besides its run: whether this host can interleave at all,
// the kernel's weights, and the figure its own is judged against (the best
// single node's peak read bandwidth from the same CPU node, read from the
// records the caller holds).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/weighted_interleave.h"
#include "daemon/probing/probe_kind.h"
#include "kernels/bandwidth.h"

namespace numaprobe::daemon {

// Why the kind is not planned over `memory_nodes` (ascending), or none:
// fewer than two memory nodes (nothing to interleave), a kernel without
// weighted interleave (`current` is nullopt: no sysfs directory; or
// `refusal`, the mbind error for the policy, is not empty: EINVAL before 6.9).
std::optional<std::string> NotPlannedReason(const std::vector<int>& memory_nodes,
                                            const std::optional<WeightedInterleave>& current,
                                            const std::string& refusal);

// The kernel's weights of `memory_nodes`, or why there are none to allocate
// with (a node without a readable weight: the kernel gives every node a file).
struct InterleaveWeightsNow {
  std::map<int, int> weights;
  std::string problem;  // "": weights holds every node
};
InterleaveWeightsNow WeightsOf(const std::vector<int>& memory_nodes, const std::optional<WeightedInterleave>& current);

// The best single memory node's peak read figure from `cpu_node` among
// `records` (every kind's; peak figures are those a kind advertises as the
// whole node's read bandwidth, ProbeKind::AdvertisedOf), bytes per second.
struct BestNodePeak {
  int mem_node = -1;
  double bytes_per_second = 0;
};
std::optional<BestNodePeak> BestNodePeakOf(const std::vector<RecordPtr>& records, int cpu_node);

// A run's result: the bandwidth kernel's (its buffer's placement holds each
// node's share of the pages), the weights the buffer was allocated with, and
// the figure it is judged against, if the caller held one.
struct InterleaveResult : kernels::BandwidthResult {
  std::map<int, int> weights;
  std::optional<BestNodePeak> best_node;
};

// The figure over the best node's; none without one.
std::optional<double> GainOf(const InterleaveResult& result);

}  // namespace numaprobe::daemon
