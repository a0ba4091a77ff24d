// `numaprobe topology`: what numaprobe sees of the machine and what it would probe.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "daemon/cli/commands.h"
#include "daemon/cli/plan_flags.h"
#include "daemon/output/json_report.h"
#include "daemon/output/json_text.h"
#include "daemon/output/table_report.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

namespace {

struct TopologyCommand {
  PlanFlags plan;
  std::string format = "table";

  int Run() const {
    auto host = PlanFromFlags(plan);
    if (const int* exit_code = std::get_if<int>(&host)) return *exit_code;
    const auto& [topology, built] = std::get<HostPlan>(host);
    if (format == "json") {
      std::cout << JsonText(TopologyToJson(topology, built)) << '\n';
    } else {
      std::cout << FormatTopology(topology, built);
    }
    return kExitOk;
  }
};

}  // namespace

void AddTopologyCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<TopologyCommand>();
  CLI::App* sub = app.add_subcommand("topology", "Print the CPUs, NUMA nodes, caches, distances and the probe plan");
  command->plan.Register(*sub);
  sub->add_option("--format", command->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
