// SPDX-License-Identifier: Apache-2.0
// `numaprobe probe`: the one-shot matrices a person runs at a terminal, like
// `mlc --latency_matrix` / `--bandwidth_matrix` / `--c2c_latency`, but open
// and non-root. Measures with the same ProbeRunner the daemon uses.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "daemon/cli/cli_flag_registry.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/fact_root_flags.h"
#include "daemon/cli/plan_flags.h"
#include "daemon/cli/progress.h"
#include "daemon/config/config.h"
#include "daemon/config/config_values.h"
#include "daemon/output/json_report.h"
#include "daemon/output/json_text.h"
#include "daemon/output/svg_plot.h"
#include "daemon/output/table_report.h"
#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

// Flag values are the kernels' names, as in the config file (config.cc).
template <class E, std::size_t N>
std::map<std::string, E> ByName(const E (&values)[N], std::string_view (*name)(E)) {
  std::map<std::string, E> by_name;
  for (E value : values) by_name.emplace(name(value), value);
  return by_name;
}
const std::map<std::string, k::PagePolicy> kPagePolicies = ByName(k::kAllPagePolicies, k::PagePolicyName);

// What a run reads of the runs before it (ProbeRunner::Run's `published`):
// the successful ones, as the daemon publishes only those.
std::vector<RecordPtr> SuccessfulRecords(const ProbeReport& report) {
  std::vector<RecordPtr> ok;
  for (const RecordPtr& record : report.records) {
    if (record->ok()) ok.push_back(record);
  }
  return ok;
}

// The kinds `numaprobe probe` runs without --tests, and every kind's name.
std::vector<std::string> DefaultTests() {
  std::vector<std::string> names;
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->traits().runs_by_default) names.emplace_back(kind->name());
  }
  return names;
}
std::vector<std::string> AllTests() {
  std::vector<std::string> names;
  for (const ProbeKind* kind : ProbeTable()) names.emplace_back(kind->name());
  return names;
}

BufferSettings UnlimitedBuffers(BufferSettings settings) {
  settings.budget_bytes = 0;
  settings.keep_between_probes = true;  // one run, many probes: prepare each buffer once
  return settings;
}

// What the kinds' figures are (KindTraits::figure_help), for the help's footer.
std::string FiguresHelp() {
  std::string text;
  for (const ProbeKind* kind : ProbeTable()) {
    const std::string_view help = kind->traits().figure_help;
    if (!help.empty()) text += (text.empty() ? "" : "\n\n") + std::string(help);
  }
  return text;
}

struct ProbeCommand {
  PlanFlags plan;
  std::vector<std::string> tests = DefaultTests();
  std::string format = "table";
  std::string plot_file;  // SVG of the curves of kinds that draw one
  // The same defaults as the daemon (config/numaprobe.yaml), so that a figure
  // from the terminal and one from /metrics are measured the same way; the
  // daemon's memory budget does not apply to a one-shot run.
  BufferSettings buffers = UnlimitedBuffers(BufferSettingsFrom(Config{}));
  ProbeSettings settings = ProbeSettingsFrom(Config{});
  std::string lock_file = kDefaultProbeLockFile;
  FactRootFlags paths;  // where the report's host facts are read

  void Register(CLI::App& sub) {
    plan.Register(sub);
    sub.add_option("--tests", tests, "Probes to run")
        ->default_str(ListDefault(tests))
        ->delimiter(',')
        ->check(CLI::IsMember(AllTests()));
    sub.add_option("--format", format, "Output format")->check(CLI::IsMember({"table", "json"}));
    sub.add_option("--plot", plot_file,
                   "Write the curves of probes that draw one (loaded_latency) to this file as an SVG plot");
    sub.add_option("--pages", buffers.pages,
                   "Page size policy: auto (hugetlb, then THP, then base pages), hugetlb, thp, 4k (base pages)")
        ->transform(CLI::CheckedTransformer(kPagePolicies, CLI::ignore_case))
        ->default_str(std::string(k::PagePolicyName(buffers.pages)));
    sub.add_option("--lock-file", lock_file,
                   "Host-wide probe lock shared with the daemon, so their probes never overlap (\"\": none)");
    paths.Register(sub);
    CliFlagRegistry flags(sub);
    for (const ProbeKind* kind : ProbeTable()) kind->command_line().RegisterFlags(flags, settings);
  }

  // The curves of every kind that ran, in one SVG file.
  bool WritePlot(const ProbeReport& report) const {
    std::vector<PlotSeries> curves;
    for (const ProbeKind* kind : ProbeTable()) {
      for (PlotSeries& curve : kind->Curves(report.Of(*kind))) curves.push_back(std::move(curve));
    }
    if (curves.empty()) {
      fmt::print(stderr, "numaprobe: --plot: none of the probes run ({}) draws a curve; no plot written\n",
                 CLI::detail::join(tests));
      return true;
    }
    std::ofstream out(plot_file, std::ios::trunc);
    out << RenderSvgPlot(curves);
    out.close();
    if (!out) {
      fmt::print(stderr, "numaprobe: cannot write the plot to {}: {}\n", plot_file, std::strerror(errno));
      return false;
    }
    return true;
  }

  bool Wants(const std::string& test) const { return std::find(tests.begin(), tests.end(), test) != tests.end(); }

  // Settings a kind takes from another kind's flag.
  void ApplySharedFlags() {
    for (const ProbeKind* kind : ProbeTable()) kind->command_line().AfterFlags(settings);
  }

  // The host-wide lock shared with the daemon. A missing lock directory (no
  // daemon installed) only warns: a person at a terminal still gets figures.
  // Any other failure is reported and gives nullopt (a usage error).
  std::optional<ProbeLock> OpenLock() const {
    auto lock = ProbeLock::Open(lock_file);
    if (!lock.ok() && LockDirectoryMissing(lock_file)) {
      fmt::print(stderr,
                 "numaprobe: warning: {}: measuring without host-wide exclusion, so another numaprobe process "
                 "could probe at the same time and disturb these figures\n",
                 lock.failure().reason);
      return ProbeLock{};
    }
    if (!lock.ok()) {
      fmt::print(stderr, "numaprobe: {} (--lock-file \"\" runs without host-wide exclusion)\n", lock.failure().reason);
      return std::nullopt;
    }
    return std::move(lock).value();
  }

  // Every (kind, target) the chosen --tests measure, listed up front so that
  // the progress line knows the total.
  std::vector<std::pair<const ProbeKind*, ProbeTarget>> ListRuns(const k::Topology& topology, const Plan& p) const {
    std::vector<std::pair<const ProbeKind*, ProbeTarget>> runs;
    for (const ProbeKind* kind : ProbeTable()) {
      if (!Wants(std::string(kind->name()))) continue;
      for (ProbeTarget& target : kind->Targets(p, settings, topology)) runs.emplace_back(kind, std::move(target));
    }
    return runs;
  }

  // For each kind --tests names that has no run on this host: that it has
  // nothing to measure, then the plan's notes (where a kind that plans no
  // run says why), so that no figure is not mistaken for a silent failure.
  std::string NothingToMeasure(const std::vector<std::pair<const ProbeKind*, ProbeTarget>>& runs, const Plan& p) const {
    std::string out;
    for (const ProbeKind* kind : ProbeTable()) {
      if (!Wants(std::string(kind->name()))) continue;
      if (std::any_of(runs.begin(), runs.end(), [&](const auto& run) { return run.first == kind; })) continue;
      out += fmt::format("\n{}: nothing to measure on this host\n", kind->traits().title);
    }
    if (out.empty()) return out;
    for (const std::string& note : p.notes) out += "  note: " + note + '\n';
    return out;
  }

  // Measures the runs one after another with the daemon's ProbeRunner, saying
  // once (not per run) when another process holds the lock.
  void Measure(const k::Topology& topology, ProbeLock& lock,
               const std::vector<std::pair<const ProbeKind*, ProbeTarget>>& runs, ProbeReport& report) const {
    BufferPool pool(buffers);
    bool told = false;
    ProbeRunner runner(topology, pool, settings, lock, [&] {
      if (!std::exchange(told, true)) {
        const std::optional<ProbeLockHolder> holder = lock.Holder();
        fmt::print(stderr, "numaprobe: the probe lock {} is held by {}: waiting for it\n", lock_file,
                   holder ? holder->Describe() : std::string("another process"));
      }
    });
    Progress progress(static_cast<int>(runs.size()));
    for (const auto& [kind, target] : runs) {
      report.records.push_back(runner.Run(*kind, target, nullptr, std::nullopt, SuccessfulRecords(report)));
      progress.Step(kind->Describe(target));
    }
  }

  int Run() {
    FactRoots roots;
    if (auto error = paths.Resolve(roots); !error.empty()) {
      fmt::print(stderr, "numaprobe: {}\nRun 'numaprobe --help' for usage.\n", error);
      return kExitUsage;
    }
    ApplySharedFlags();
    for (const ProbeKind* kind : ProbeTable()) {
      if (!Wants(std::string(kind->name()))) continue;
      if (std::string problem = kind->command_line().FlagsProblem(settings); !problem.empty()) {
        fmt::print(stderr, "numaprobe: {}\nRun 'numaprobe --help' for usage.\n", problem);
        return kExitUsage;
      }
    }
    auto host = PlanFromFlags(plan);
    if (const int* exit_code = std::get_if<int>(&host)) return *exit_code;
    const auto& [topology, p] = std::get<HostPlan>(host);
    std::optional<ProbeLock> lock = OpenLock();
    if (!lock) return kExitUsage;
    ProbeReport report{ReadHostInfo(topology.cpu_model, roots.proc, roots.sys), {}, {}, {}, {}};
    for (const auto& node : topology.nodes()) {
      if (node.memory_bytes > 0) report.memory_nodes.push_back(node.id);
      if (!node.cpus.empty()) report.cpu_nodes.push_back(node.id);
      for (const auto& other : topology.nodes())
        report.distances[{node.id, other.id}] = topology.Distance(node.id, other.id);
    }
    const auto runs = ListRuns(topology, p);
    Measure(topology, *lock, runs, report);
    if (!plot_file.empty() && !WritePlot(report)) return kExitFailure;
    if (format == "json") {
      std::cout << JsonText(ReportToJson(report, topology, p)) << '\n';
    } else {
      std::cout << FormatReport(report) << NothingToMeasure(runs, p);
    }
    return report.all_ok() ? kExitOk : kExitFailure;
  }
};

}  // namespace

void AddProbeCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<ProbeCommand>();
  CLI::App* sub =
      app.add_subcommand("probe", "Measure the latency, bandwidth and core-to-core matrices once and print them");
  command->Register(*sub);
  sub->footer(FiguresHelp());
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
