// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/plan_flags.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/cli/cli_flag_registry.h"
#include "daemon/cli/commands.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

void PlanFlags::Register(CLI::App& command) {
  const std::size_t before = command.get_options().size();
  CliFlagRegistry flags(command);
  flags.AddCpuList(
      "--cpus", [this](std::vector<int> cpus) { options.cpus = std::move(cpus); },
      "Measuring CPUs, e.g. 0,8-11 (default: one per NUMA node)");
  flags.AddCpuList(
      "--nodes", [this](std::vector<int> nodes) { options.mem_nodes = std::move(nodes); },
      "Memory nodes to measure, e.g. 0-1 (default: every allowed node with memory)");
  command.add_flag("--per-cpu", options.per_cpu, "Measure from every allowed CPU (of --cpus), not one per node");
  for (const ProbeKind* kind : ProbeTable()) kind->command_line().RegisterPlanFlags(flags, options);
  // Read after parsing: the options registered above are the plan flags.
  const std::vector<CLI::Option*> all = command.get_options();
  const std::vector<CLI::Option*> registered(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  given_ = [registered] {
    return std::any_of(registered.begin(), registered.end(), [](CLI::Option* o) { return o->count() > 0; });
  };
}

std::variant<HostPlan, int> PlanFromFlags(const PlanFlags& flags, bool allow_described) {
  auto topology = kernels::Topology::FromHost();
  if (!topology.ok()) {
    fmt::print(stderr, "numaprobe: cannot read the topology: {}\n", topology.failure().reason);
    return kExitFailure;
  }
  if (!allow_described && !topology->described_by.empty()) {
    fmt::print(stderr,
               "numaprobe: the topology is {}, not this system: probes measure this system only (unset it; "
               "numaprobe topology plans a described host)\n",
               topology->described_by);
    return kExitUsage;
  }
  auto plan = BuildPlan(flags.options, topology.value());
  if (!plan.ok()) {
    fmt::print(stderr, "numaprobe: {}\n", plan.failure().reason);
    return kExitUsage;
  }
  return HostPlan{std::move(topology).value(), std::move(plan).value()};
}

}  // namespace numaprobe::daemon
