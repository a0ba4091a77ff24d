// `numaprobe topology`: what numaprobe sees of the machine and what it would probe.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "daemon/commands.h"
#include "daemon/json_report.h"
#include "daemon/plan_flags.h"
#include "daemon/table_report.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

namespace {

struct TopologyCommand {
  PlanFlags plan;
  std::string format = "table";

  int Run() const {
    auto topology = kernels::Topology::FromHost();
    if (!topology.ok()) {
      fmt::print(stderr, "numaprobe: cannot read the topology: {}\n", topology.failure().reason);
      return kExitFailure;
    }
    auto options = plan.ToOptions();
    if (!options.ok()) {
      fmt::print(stderr, "numaprobe: {}\n", options.failure().reason);
      return kExitUsage;
    }
    auto built = BuildPlan(options.value(), topology.value());
    if (!built.ok()) {
      fmt::print(stderr, "numaprobe: {}\n", built.failure().reason);
      return kExitUsage;
    }
    if (format == "json") {
      std::cout << TopologyToJson(topology.value(), built.value()).dump(2) << '\n';
    } else {
      std::cout << FormatTopology(topology.value(), built.value());
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
