// SPDX-License-Identifier: Apache-2.0
// The flags that choose what to measure, shared by `probe` and `topology` so
// that `numaprobe topology` shows exactly the plan `numaprobe probe` would run:
// --cpus, --nodes, --per-cpu and the flags of the kinds that plan their own
// targets (KindCommandLine::RegisterPlanFlags).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <variant>

#include "daemon/probing/plan.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct PlanFlags {
  PlanOptions options;  // what the flags say; a malformed list fails parsing, naming its flag

  void Register(CLI::App& command);
  // Whether any of the flags was given.
  bool Given() const { return given_ != nullptr && given_(); }

 private:
  std::function<bool()> given_;
};

// The host's topology and the plan the flags ask for on it.
struct HostPlan {
  kernels::Topology topology;
  Plan plan;
};

// On failure prints the reason on stderr and returns the exit code:
// kExitFailure if the topology cannot be read, kExitUsage if the plan fails.
// A topology HWLOC_XMLFILE or HWLOC_SYNTHETIC describes (not this system) is
// refused unless `allow_described` (`topology` plans it; `probe` measures
// this system only).
std::variant<HostPlan, int> PlanFromFlags(const PlanFlags& flags, bool allow_described = false);

}  // namespace numaprobe::daemon
