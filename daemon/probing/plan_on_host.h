// SPDX-License-Identifier: Apache-2.0
// The plan a configuration implies on this host now (what the host's
// LoopEnvironment plans with, serve/loop_environment.cc), and everything
// `serve`, a reload and `check-config` check beyond the file itself.
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Builds the plan `config` implies on this host now: the check a reload must
// pass before it replaces the running configuration. Refuses a topology that
// HWLOC_XMLFILE or HWLOC_SYNTHETIC describe: the daemon measures this system.
kernels::Expected<Plan> PlanOnHost(const Config& config, kernels::Topology* topology_out = nullptr);

// Everything `serve`, a reload and `check-config` check beyond the file itself:
// that the probes can be planned on this host now (configured CPUs and nodes
// exist and are allowed) and that the probe lock file opens. One message per
// problem; empty if none.
std::vector<std::string> CheckOnHost(const Config& config);

}  // namespace numaprobe::daemon
