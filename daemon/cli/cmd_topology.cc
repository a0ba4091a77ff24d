// SPDX-License-Identifier: Apache-2.0
// `numaprobe topology`: what numaprobe sees of the machine and what it would
// probe; with --config.file also what the daemon would do on this host with
// that configuration (the sizing preview, serve/preview.h).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/cli/commands.h"
#include "daemon/cli/plan_flags.h"
#include "daemon/output/json_report.h"
#include "daemon/output/json_text.h"
#include "daemon/output/table_report.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/preview.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/state.h"
#include "daemon/serve/task_cost_measure.h"
#include "kernels/file_read.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

namespace {

namespace k = kernels;

nlohmann::json PreviewJson(const SchedulePreview& p, const std::string& costs_from) {
  return {{"rotation_rounds", p.rotation_rounds},
          {"round_seconds", p.round_seconds},
          {"representatives_refresh_seconds", p.representatives_refresh_seconds},
          {"every_pair_refresh_seconds", p.every_pair_refresh_seconds},
          {"cpu_seconds_per_hour", p.cpu_seconds_per_hour},
          {"steady_cpu_seconds_per_hour", p.steady_cpu_seconds_per_hour},
          {"cycle_cpu_seconds", p.cycle_cpu_seconds},
          {"series", p.series},
          {"tasks", p.tasks},
          {"representatives", p.representatives},
          {"budget_ratio", p.budget_ratio},
          {"learning_budget_ratio", p.learning_budget_ratio},
          {"ready_seconds", p.ready_seconds},
          {"armed_representatives_seconds", p.armed_representatives_seconds},
          {"armed_every_pair_seconds", p.armed_every_pair_seconds},
          {"ready_after_restart_seconds", p.ready_after_restart_seconds},
          {"rearmed_after_restart_seconds", p.rearmed_after_restart_seconds},
          {"complete", p.complete},
          {"task_costs", costs_from},
          {"assumptions", p.assumptions}};
}

std::string PreviewText(const SchedulePreview& p, const std::string& costs_from) {
  std::string text = "\nSchedule with this configuration (simulated: numaprobe topology --config.file)\n";
  text += fmt::format("  {} series with a baseline; {} tasks a full round, {} of them every round\n", p.series, p.tasks,
                      p.representatives);
  text += fmt::format("  budget: {:.3g}% of one CPU while baselines record, then {:.3g}%\n",
                      p.learning_budget_ratio * 100, p.budget_ratio * 100);
  text += fmt::format("  ready (/-/ready, every representative measured): {} after a start, {} after a restart\n",
                      PreviewDuration(p.ready_seconds), PreviewDuration(p.ready_after_restart_seconds));
  text += fmt::format("  drift alerts armed: representatives after {}, every pair after {}\n",
                      PreviewDuration(p.armed_representatives_seconds), PreviewDuration(p.armed_every_pair_seconds));
  text += fmt::format("  after a restart every series is measured again within {} (armed throughout)\n",
                      PreviewDuration(p.rearmed_after_restart_seconds));
  text += fmt::format(
      "  then: {} rounds a cycle, {} a round; representatives every {}, every pair every {} ({:.1f} CPU-s a cycle)\n",
      p.rotation_rounds, PreviewDuration(p.round_seconds), PreviewDuration(p.representatives_refresh_seconds),
      PreviewDuration(p.every_pair_refresh_seconds), p.cycle_cpu_seconds);
  text += fmt::format("  probe CPU: at most {:.1f} CPU-s an hour, {:.1f} CPU-s an hour once armed\n",
                      p.cpu_seconds_per_hour, p.steady_cpu_seconds_per_hour);
  text += "  task costs: " + costs_from + "\n  assumptions:\n";
  for (const std::string& a : p.assumptions) text += "    - " + a + "\n";
  return text;
}

struct TopologyCommand {
  PlanFlags plan;
  std::string format = "table";
  std::string config_file;
  std::string task_costs_file;

  int Run() const {
    if (format == "hwloc-xml") {
      if (!config_file.empty() || plan.Given()) return Usage("--format hwloc-xml describes the host, nothing else");
      auto xml = k::HostTopologyXml();
      if (!xml.ok()) return Fail(xml.failure().reason);
      std::cout << xml.value();
      return kExitOk;
    }
    if (config_file.empty()) {
      if (!task_costs_file.empty()) return Usage("--task-costs needs --config.file (the schedule it sizes)");
      auto host = PlanFromFlags(plan, /*allow_described=*/true);
      if (const int* exit_code = std::get_if<int>(&host)) return *exit_code;
      const auto& [topology, built] = std::get<HostPlan>(host);
      Print(topology, built, nullptr, "");
      return kExitOk;
    }
    if (plan.Given())
      return Usage("--config.file plans the configuration's targets: drop --cpus, --nodes and the like");
    const ConfigResult loaded = LoadConfigFile(config_file, ProbeTableSections());
    if (const auto* errors = std::get_if<std::vector<ConfigError>>(&loaded)) {
      fmt::print(stderr, "numaprobe: {} is not a valid configuration:\n", config_file);
      for (const ConfigError& error : *errors) fmt::print(stderr, "  {}\n", error.ToString());
      return kExitUsage;
    }
    const Config& config = std::get<Config>(loaded);
    auto topology = k::Topology::FromHost();
    if (!topology.ok()) return Fail("cannot read the topology: " + topology.failure().reason);
    const k::Restriction restriction =
        topology->described_by.empty() ? k::Restriction::FromProcess() : k::Restriction{};
    auto built = BuildPlan(config.targets, topology.value());
    if (!built.ok()) return Usage(built.failure().reason);
    std::string costs_from;
    auto costs = Costs(config, costs_from);
    if (!costs.ok()) return Fail(costs.failure().reason);
    const k::Topology host = topology.value();
    auto preview = PreviewSchedule(
        config, [host](const k::Restriction&) { return k::Expected<k::Topology>(host); }, restriction, costs.value(),
        kPreviewHorizonSeconds);
    if (!preview.ok()) return Fail("cannot preview the schedule: " + preview.failure().reason);
    if (!topology->described_by.empty()) {
      preview->assumptions.push_back("the topology is " + topology->described_by +
                                     ", not this system: planned with every CPU and node allowed");
    }
    Print(topology.value(), built.value(), &preview.value(), costs_from);
    return kExitOk;
  }

  // --task-costs, else what the state file kept, else measured here now.
  k::Expected<TaskCostEstimate> Costs(const Config& config, std::string& from) const {
    TaskCostEstimate costs;
    if (!task_costs_file.empty()) {
      std::string text;
      if (const int error = k::ReadWholeFile(task_costs_file, text); error != 0) {
        return k::Failure{k::Outcome::kInvalidSpec,
                          fmt::format("cannot read {}: {}", task_costs_file, strerror(error))};
      }
      if (auto error = TaskCostEstimate::Parse(text, task_costs_file, costs); !error.empty()) {
        return k::Failure{k::Outcome::kInvalidSpec, error};
      }
      from = "from " + task_costs_file;
      return costs;
    }
    const StoredText stored = ReadStateFile(config.state_directory, kStateFile);
    if (stored.status == StoredText::Status::kOk) {
      const LoadedState state = ParseState(stored.text, config.state_directory + "/" + kStateFile);
      if (state.contents && !state.contents->schedule.costs.ToJson().empty()) {
        from = "learnt by the daemon (" + config.state_directory + "/" + kStateFile + ")";
        return state.contents->schedule.costs;
      }
    }
    // Measured here, on this machine, even when HWLOC_XMLFILE or HWLOC_SYNTHETIC describe another.
    auto here = k::Topology::FromThisMachine();
    if (!here.ok()) return here.failure();
    auto measured = MeasureTaskCosts(config, here.value());
    if (!measured.ok()) return measured.failure();
    from = "measured on this host now: " + measured->ToJson().dump();
    return measured;
  }

  void Print(const k::Topology& topology, const Plan& built, const SchedulePreview* preview,
             const std::string& costs_from) const {
    if (format == "json") {
      nlohmann::json json = TopologyToJson(topology, built);
      if (!topology.described_by.empty()) json["described_by"] = topology.described_by;
      if (preview != nullptr) json["schedule"] = PreviewJson(*preview, costs_from);
      std::cout << JsonText(json) << '\n';
    } else {
      std::cout << FormatTopology(topology, built);
      if (preview != nullptr) std::cout << PreviewText(*preview, costs_from);
    }
  }

  static int Usage(const std::string& why) {
    fmt::print(stderr, "numaprobe: {}\n", why);
    return kExitUsage;
  }
  static int Fail(const std::string& why) {
    fmt::print(stderr, "numaprobe: {}\n", why);
    return kExitFailure;
  }
};

}  // namespace

void AddTopologyCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<TopologyCommand>();
  CLI::App* sub = app.add_subcommand("topology", "Print the CPUs, NUMA nodes, caches, distances and the probe plan");
  command->plan.Register(*sub);
  sub->add_option("--format", command->format,
                  "Output format; hwloc-xml: this host's topology as HWLOC_XMLFILE reads it, to plan it elsewhere")
      ->check(CLI::IsMember({"table", "json", "hwloc-xml"}));
  sub->add_option("--config.file", command->config_file,
                  "Also preview what the daemon does on this host with this configuration: readiness, when drift "
                  "alerts arm, refresh intervals, CPU (simulated; HWLOC_XMLFILE or HWLOC_SYNTHETIC size another host)");
  sub->add_option("--task-costs", command->task_costs_file,
                  "CPU seconds per task by kind, as JSON ({\"latency\": {\"visit_start\": 0.044, \"continuation\": "
                  "0.025}, ...}); default: what the daemon's state file learnt, else measured here");
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
