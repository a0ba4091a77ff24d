// SPDX-License-Identifier: Apache-2.0
// What one probe run measures (ProbeTarget) and the (CPU, memory node) pair
// it is keyed by: the words the plan (plan.h) and the kinds (probe_kind.h)
// share. In a header of their own so that probe_kind.h needs no plan.h,
// which plan.cc could not include without a loop (plan.cc calls each kind's
// PlanTargets through probe_table.h).
#pragma once

#include <string>
#include <utility>

#include "kernels/topology.h"

namespace numaprobe::daemon {

// One (CPU, memory node) measurement.
struct MemoryPair {
  int cpu = -1;
  int cpu_node = -1;
  int mem_node = -1;
  // The plan picked `cpu` to stand for its node (no --cpus, no --per-cpu):
  // a probe may measure from any idle allowed CPU of cpu_node instead
  // (CpuChooser). False when the operator named the CPU.
  bool any_cpu_of_node = false;
  bool operator==(const MemoryPair&) const = default;
};

// What one probe run measures: from pair.cpu (of pair.cpu_node) on memory of
// pair.mem_node, so health series and placement failures are keyed the same
// way for every kind. A run between two CPUs (a cache line bounced between
// them) names the other one in `peer_cpu` and how the two relate in
// `relation`; -1 and unused otherwise. `variant` tells runs of one pair apart
// (the bandwidth op); empty otherwise.
struct ProbeTarget {
  MemoryPair pair;
  int peer_cpu = -1;
  kernels::CpuRelation relation = kernels::CpuRelation::kSameNode;
  std::string variant;
  bool operator==(const ProbeTarget&) const = default;
};

// A target without a peer CPU.
inline ProbeTarget MemoryTarget(const MemoryPair& pair, std::string variant = "") {
  ProbeTarget target;
  target.pair = pair;
  target.variant = std::move(variant);
  return target;
}

}  // namespace numaprobe::daemon
