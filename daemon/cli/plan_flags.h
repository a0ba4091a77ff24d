// The flags that choose what to measure, shared by `probe` and `topology` so
// that `numaprobe topology` shows exactly the plan `numaprobe probe` would run:
// --cpus, --nodes, --per-cpu and the flags of the kinds that plan their own
// targets (ProbeKind::RegisterPlanFlags).
#pragma once

#include <CLI/CLI.hpp>

#include <variant>

#include "daemon/probing/plan.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct PlanFlags {
  PlanOptions options;  // what the flags say; a malformed list fails parsing, naming its flag

  void Register(CLI::App& command);
};

// The host's topology and the plan the flags ask for on it.
struct HostPlan {
  kernels::Topology topology;
  Plan plan;
};

// On failure prints the reason on stderr and returns the exit code:
// kExitFailure if the topology cannot be read, kExitUsage if the plan fails.
std::variant<HostPlan, int> PlanFromFlags(const PlanFlags& flags);

}  // namespace numaprobe::daemon
