// What to measure, as the configuration's `targets` section and `numaprobe
// probe`'s flags state it; probing/plan.h turns it into a Plan on a topology.
#pragma once

#include <vector>

namespace numaprobe::daemon {

struct PlanOptions {
  std::vector<int> cpus;       // explicit measuring CPUs; empty: one representative per node
  std::vector<int> mem_nodes;  // explicit memory nodes; empty: every allowed node with memory
  bool per_cpu = false;        // every allowed CPU (of `cpus` if given) measures, not one per node
  std::vector<int> c2c_cpus;   // explicit c2c CPU list (pairs of it); empty: one pair per relation
  bool operator==(const PlanOptions&) const = default;
};

}  // namespace numaprobe::daemon
