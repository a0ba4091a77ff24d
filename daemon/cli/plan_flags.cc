#include "daemon/cli/plan_flags.h"

#include <fmt/format.h>

#include "daemon/cli/commands.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {

void PlanFlags::Register(CLI::App& command) {
  command.add_option("--cpus", cpus, "Measuring CPUs, e.g. 0,8-11 (default: one per NUMA node)");
  command.add_option("--nodes", nodes, "Memory nodes to measure, e.g. 0-1 (default: every allowed node with memory)");
  command.add_flag("--per-cpu", per_cpu, "Measure from every allowed CPU (of --cpus), not one per node");
  command.add_option("--c2c-cpus", c2c_cpus,
                     "CPUs whose pairs run the core-to-core probe (default: one pair per relation)");
}

kernels::Expected<PlanOptions> PlanFlags::ToOptions() const {
  PlanOptions options;
  options.per_cpu = per_cpu;
  const std::pair<const std::string*, std::vector<int>*> lists[] = {{&cpus, &options.cpus},
                                                                    {&nodes, &options.mem_nodes},
                                                                    {&c2c_cpus, &options.c2c_cpus}};
  const char* names[] = {"--cpus", "--nodes", "--c2c-cpus"};
  for (int i = 0; i < 3; ++i) {
    auto parsed = kernels::ParseCpuList(*lists[i].first);
    if (!parsed.ok()) {
      return kernels::Failure{kernels::Outcome::kInvalidSpec, std::string(names[i]) + ": " + parsed.failure().reason};
    }
    *lists[i].second = parsed.value();
  }
  return options;
}

std::variant<HostPlan, int> PlanFromFlags(const PlanFlags& flags) {
  auto topology = kernels::Topology::FromHost();
  if (!topology.ok()) {
    fmt::print(stderr, "numaprobe: cannot read the topology: {}\n", topology.failure().reason);
    return kExitFailure;
  }
  auto options = flags.ToOptions();
  if (!options.ok()) {
    fmt::print(stderr, "numaprobe: {}\n", options.failure().reason);
    return kExitUsage;
  }
  auto plan = BuildPlan(options.value(), topology.value());
  if (!plan.ok()) {
    fmt::print(stderr, "numaprobe: {}\n", plan.failure().reason);
    return kExitUsage;
  }
  return HostPlan{std::move(topology).value(), std::move(plan).value()};
}

}  // namespace numaprobe::daemon
