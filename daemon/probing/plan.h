// SPDX-License-Identifier: Apache-2.0
// What a round measures: which CPU measures which memory node, and the
// targets of the kinds that plan their own (ProbeKind::PlanTargets: runs
// between CPUs). BuildPlan is a pure function of the options and the Topology
// value, so tests feed it synthetic machines.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/plan_options.h"
#include "daemon/probing/probe_target.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct Plan {
  std::vector<MemoryPair> memory_pairs;  // sorted by (cpu_node, mem_node, cpu)
  // The targets each kind planned itself, by the kind's name (none: absent).
  std::map<std::string, std::vector<ProbeTarget>, std::less<>> kind_targets;
  std::vector<std::string> notes;  // what was left out and why ("node 3: no CPUs, memory only")

  // The targets the kind named `kind` planned itself; empty if none.
  const std::vector<ProbeTarget>& TargetsOf(std::string_view kind) const;
};

// The representative CPU of a node: its highest-numbered allowed CPU (CPU 0 and
// low CPUs tend to carry housekeeping and interrupts).
int RepresentativeCpu(const kernels::NodeInfo& node);

// The memory pairs, then every kind's own targets (ProbeKind::PlanTargets,
// in probe-table order). Fails (kInvalidSpec / kNotAllowed) naming the CPU or
// node: unknown CPU, CPU outside the affinity mask or offline, unknown node,
// node outside cpuset.mems, node without memory, or what a kind refuses.
kernels::Expected<Plan> BuildPlan(const PlanOptions& options, const kernels::Topology& topology);

// The rules every plan follows, for the kinds that plan their own targets.

// `cpus` sorted and without duplicates if every one is an allowed CPU; else
// fails as BuildPlan does, naming the first one that is not.
kernels::Expected<std::vector<int>> CheckedCpus(std::vector<int> cpus, const kernels::Topology& topology);

// Allowed CPUs grouped by a key (core, LLC, node), each group ascending.
// Negative keys mean "unknown" and form no group.
std::map<int, std::vector<int>> GroupCpus(const kernels::Topology& topology, int kernels::CpuInfo::*key);

// Where a line or buffer "on node n" can actually live: n itself when we may
// allocate there, else the nearest node we may allocate on (-1: none).
int MemoryHome(int node, const kernels::Topology& topology);

}  // namespace numaprobe::daemon
