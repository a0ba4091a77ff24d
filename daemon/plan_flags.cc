#include "daemon/plan_flags.h"

#include "kernels/cpulist.h"

namespace numaprobe::daemon {

void PlanFlags::Register(CLI::App& command) {
  command.add_option("--cpus", cpus, "Measuring CPUs, e.g. 0,8-11 (default: one per NUMA node)");
  command.add_option("--nodes", nodes, "Memory nodes to measure, e.g. 0-1 (default: every allowed node with memory)");
  command.add_flag("--per-cpu", per_cpu, "Measure from every allowed CPU (of --cpus), not one per node");
  command.add_option("--c2c-cpus", c2c_cpus, "CPUs whose pairs run the core-to-core probe (default: one pair per relation)");
}

kernels::Expected<PlanOptions> PlanFlags::ToOptions() const {
  PlanOptions options;
  options.per_cpu = per_cpu;
  const std::pair<const std::string*, std::vector<int>*> lists[] = {
      {&cpus, &options.cpus}, {&nodes, &options.mem_nodes}, {&c2c_cpus, &options.c2c_cpus}};
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

}  // namespace numaprobe::daemon
