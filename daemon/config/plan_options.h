// SPDX-License-Identifier: Apache-2.0
// What to measure, as the configuration's `targets` section and `numaprobe
// probe`'s flags state it; probing/plan.h turns it into a Plan on a topology.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numaprobe::daemon {

struct PlanOptions {
  std::vector<int> cpus;       // explicit measuring CPUs; empty: one representative per node
  std::vector<int> mem_nodes;  // explicit memory nodes; empty: every allowed node with memory
  bool per_cpu = false;        // every allowed CPU (of `cpus` if given) measures, not one per node
  // The CPU lists of the kinds that plan their own targets
  // (ProbeKind::PlanTargets), by option name: the key under `targets` in the
  // configuration (the flag is the kind's). Only non-empty lists are present;
  // an absent one means the kind chooses from the topology.
  std::map<std::string, std::vector<int>, std::less<>> kind_cpus;
  bool operator==(const PlanOptions&) const = default;

  // kind_cpus[option], or empty.
  const std::vector<int>& KindCpus(std::string_view option) const {
    static const std::vector<int> kNone;
    const auto it = kind_cpus.find(option);
    return it == kind_cpus.end() ? kNone : it->second;
  }
  // Sets kind_cpus[option], keeping only non-empty lists.
  void SetKindCpus(const std::string& option, std::vector<int> ids) {
    if (ids.empty()) {
      kind_cpus.erase(option);
    } else {
      kind_cpus[option] = std::move(ids);
    }
  }
};

}  // namespace numaprobe::daemon
