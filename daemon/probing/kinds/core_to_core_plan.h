// SPDX-License-Identifier: Apache-2.0
// The core_to_core kind's targets: which CPU pairs bounce a line, and on
// which node the line lives. The kind plans them itself (ProbeKind::PlanTargets)
// from the topology and its own target option, the CPU list `c2c_cpus`.
#pragma once

#include <string>
#include <vector>

#include "daemon/probing/plan.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// One core-to-core measurement with the line homed on line_node.
struct C2cPair {
  int cpu_a = -1;
  int cpu_b = -1;
  int line_node = -1;
  kernels::CpuRelation relation = kernels::CpuRelation::kSameNode;
  bool operator==(const C2cPair&) const = default;
};

// The target of a pair: (cpu_a, cpu_a's node, the line's node) keys its
// health series and placement failures like the memory kinds' pairs; cpu_b is
// its peer CPU.
ProbeTarget C2cTarget(const C2cPair& pair, int cpu_a_node);
C2cPair C2cPairOf(const ProbeTarget& target);

// Empty `cpus`: one pair per CPU relation (SMT siblings, same LLC, same node:
// the highest CPUs that relate so) and for each pair of nodes their
// representatives with the line on each side; the relations no allowed pair
// has go to `notes`. Else every pair of `cpus`, with the line on cpu_a's node.
// Fails naming the first CPU that is not an allowed one, or when fewer than
// two distinct CPUs are given.
kernels::Expected<std::vector<C2cPair>> PlanC2cPairs(const std::vector<int>& cpus, const kernels::Topology& topology,
                                                     std::vector<std::string>& notes);

}  // namespace numaprobe::daemon
