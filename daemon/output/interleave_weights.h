// SPDX-License-Identifier: Apache-2.0
// Interleave weights from measured bandwidth. Since Linux 6.16 the kernel
// sets the weights of MPOL_WEIGHTED_INTERLEAVE itself (weighted_interleave/
// auto): for each node min(read, write) bandwidth from its nearest CPUs as
// the firmware advertises it (HMAT access class 1, or CXL CDAT), reduced to
// small integers (KernelWeightReduction). One global vector serves every CPU
// node. This file feeds the same reduction, per CPU node:
//   measured:         the CPU node's peak bandwidth (all its CPUs streaming,
//                     the peak_bandwidth kind) to every memory node;
//   measured_nearest: each memory node's peak from its nearest CPU node, as
//                     the kernel takes its figures (one global vector);
//   firmware:         the HMAT figures the kernel's auto mode uses;
// beside the weights the kernel uses now (sysfs), and answers what an
// interleaved allocation would lose with the kernel's weights against those
// its own rule gives the measured figures (InterleavedBandwidth). numaprobe never
// writes the weights; it prints the lines that would (InterleaveSections).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/hmat.h"
#include "daemon/common/weighted_interleave.h"
#include "daemon/output/hmat_report.h"
#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

// The kernel's arithmetic (mm/mempolicy.c reduce_interleave_weights, Linux
// 6.16): `mib_per_second` holds every node with memory and its bandwidth in
// MiB/s (0: no figure). Each node gets floor(32 * bw / total), at least 1,
// and all are divided by their greatest common divisor (1:2, not 16:32).
std::map<int, int> KernelWeightReduction(const std::map<int, std::uint64_t>& mib_per_second);

// The bandwidth an interleaved stream from many CPUs gets when every node
// serves its weight's share of the pages and all serve at once: the node that
// fills first bounds it, min over nodes of per_node * total weight / weight.
// Weights proportional to the bandwidths give their sum. nullopt if a weighted
// node has no bandwidth.
std::optional<double> InterleavedBandwidth(const std::map<int, int>& weights, const std::map<int, double>& per_node);

// What the weights are judged against besides the measured figures.
struct InterleaveHost {
  std::vector<int> memory_nodes;                 // the nodes with memory
  std::vector<int> cpu_nodes;                    // the nodes with CPUs the probes may use
  std::map<std::pair<int, int>, int> distances;  // SLIT, (from, to); a node is nearest to itself
  std::vector<HmatTarget> hmat;                  // the firmware's figures
  std::optional<WeightedInterleave> current;     // the kernel's weights; nullopt before 6.9
};

struct InterleaveWeights {
  int cpu_node = -1;
  // min(read, write) peak bandwidth from cpu_node, bytes per second, per
  // memory node measured (the median of its figures).
  std::map<int, double> measured_bandwidth;
  // The reduction of cpu_node's own figures: what suits allocations from
  // cpu_node alone (a package-aware vector); empty until every memory node
  // has both figures from it.
  std::map<int, int> measured;
  // The reduction of each memory node's figures from its nearest CPU node:
  // the kernel's auto-mode rule fed measured figures instead of the
  // firmware's, one vector for every CPU node; empty until each memory
  // node's nearest CPU node has measured it.
  std::map<int, int> measured_nearest;
  std::map<int, int> firmware;  // empty without HMAT bandwidth
  std::map<int, int> kernel;    // empty when the kernel has no weighted interleave
  // InterleavedBandwidth(kernel) / InterleavedBandwidth(measured_nearest),
  // both on cpu_node's measured bandwidths: below 1 the kernel's weights
  // lose bandwidth that its own rule on true figures would not.
  std::optional<double> kernel_over_nearest;
};

// One entry per CPU node with a peak figure; none when fewer than two nodes
// have memory (nothing to interleave).
std::vector<InterleaveWeights> InterleaveWeightsOf(const std::vector<RecordPtr>& records, const InterleaveHost& host);

// [{"cpu_node", "measured", "measured_nearest", "kernel", "firmware" (node ->
// weight; node ids as JSON keys), "kernel_over_nearest"}]; [] with one memory node.
nlohmann::json InterleaveToJson(const std::vector<InterleaveWeights>& weights);

// "Interleave weights": the three vectors per CPU node and the sysfs and
// numactl lines that would set the measured ones. Shown when the records hold
// a peak figure; on a one-node host it says there is nothing to interleave.
std::vector<ReportSection> InterleaveSections(const std::vector<RecordPtr>& records, const InterleaveHost& host);

}  // namespace numaprobe::daemon
