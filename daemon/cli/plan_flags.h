// The flags that choose CPUs and nodes, shared by `probe` and `topology` so
// that `numaprobe topology` shows exactly the plan `numaprobe probe` would run.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <variant>

#include "daemon/probing/plan.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct PlanFlags {
  std::string cpus;
  std::string nodes;
  std::string c2c_cpus;
  bool per_cpu = false;

  void Register(CLI::App& command);
  // Parses the lists; a malformed list fails naming the flag.
  kernels::Expected<PlanOptions> ToOptions() const;
};

// The host's topology and the plan the flags ask for on it.
struct HostPlan {
  kernels::Topology topology;
  Plan plan;
};

// On failure prints the reason on stderr and returns the exit code:
// kExitFailure if the topology cannot be read, kExitUsage for bad flags.
std::variant<HostPlan, int> PlanFromFlags(const PlanFlags& flags);

}  // namespace numaprobe::daemon
