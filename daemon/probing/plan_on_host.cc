// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/plan_on_host.h"

#include <utility>

#include "daemon/probing/probe_lock.h"

namespace numaprobe::daemon {

namespace k = kernels;

k::Expected<Plan> PlanOnHost(const Config& config, k::Topology* topology_out) {
  auto topology = k::Topology::FromHost();
  if (!topology.ok()) return topology.failure();
  if (!topology->described_by.empty()) {
    return k::Failure{k::Outcome::kInvalidSpec,
                      "the topology is " + topology->described_by +
                          ", not this system: the daemon measures this system only (unset it)"};
  }
  auto plan = BuildPlan(config.targets, topology.value());
  if (plan.ok() && topology_out != nullptr) *topology_out = std::move(topology).value();
  return plan;
}

std::vector<std::string> CheckOnHost(const Config& config) {
  std::vector<std::string> problems;
  if (auto plan = PlanOnHost(config); !plan.ok()) problems.push_back(plan.failure().reason);
  if (auto lock = ProbeLock::Open(config.probe_lock_file); !lock.ok()) {
    problems.push_back(lock.failure().reason + " (probe_lock_file: \"\" disables host-wide exclusion)");
  }
  return problems;
}

}  // namespace numaprobe::daemon
