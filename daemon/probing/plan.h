// Which CPU measures which memory node, and which CPU pairs bounce a line.
// BuildPlan is a pure function of the options and the Topology value, so tests
// feed it synthetic machines.
#pragma once

#include <string>
#include <vector>

#include "daemon/config/plan_options.h"
#include "kernels/result.h"
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

// One core-to-core measurement with the line homed on line_node.
struct C2cPair {
  int cpu_a = -1;
  int cpu_b = -1;
  int line_node = -1;
  kernels::CpuRelation relation = kernels::CpuRelation::kSameNode;
  bool operator==(const C2cPair&) const = default;
};

struct Plan {
  std::vector<MemoryPair> memory_pairs;  // sorted by (cpu_node, mem_node, cpu)
  std::vector<C2cPair> c2c_pairs;
  std::vector<std::string> notes;  // what was left out and why ("node 3: no CPUs, memory only")
};

// The representative CPU of a node: its highest-numbered allowed CPU (CPU 0 and
// low CPUs tend to carry housekeeping and interrupts).
int RepresentativeCpu(const kernels::NodeInfo& node);

// Fails (kInvalidSpec / kNotAllowed) naming the CPU or node: unknown CPU, CPU
// outside the affinity mask or offline, unknown node, node outside
// cpuset.mems, node without memory.
kernels::Expected<Plan> BuildPlan(const PlanOptions& options, const kernels::Topology& topology);

}  // namespace numaprobe::daemon
