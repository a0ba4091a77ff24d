// SPDX-License-Identifier: Apache-2.0
// `numaprobe check-config FILE`: validates a config file the way `serve` and a
// reload would (the file, then CheckOnHost), without starting anything, like
// `promtool check config`. Made for systemd's ExecStartPre/ExecReload and for
// config management to run before a SIGHUP; --syntax-only skips the host part
// for configs meant for other hosts. --print writes the effective
// configuration (every key, defaults included) to stdout instead of the verdict.
// Beside the verdict it says which baselines the file would re-record
// (baseline_impact.h): a valid change can still disarm drift alerts for hours.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "daemon/cli/baseline_impact.h"
#include "daemon/cli/commands.h"
#include "daemon/config/config.h"
#include "daemon/config/config_print.h"
#include "daemon/probing/plan_on_host.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

namespace {

struct CheckConfigCommand {
  std::string file;
  bool syntax_only = false;
  bool print = false;

  int Run() const {
    const ConfigResult result = LoadConfigFile(file, ProbeTableSections());
    if (const auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
      // "FILE: line N: key: message" - the shape compilers use, so editors
      // and CI annotate the right line.
      for (const ConfigError& error : *errors) fmt::print(stderr, "{}: {}\n", file, error.ToString());
      return kExitFailure;
    }
    if (!syntax_only) {
      const std::vector<std::string> problems = CheckOnHost(std::get<Config>(result));
      for (const std::string& problem : problems) fmt::print(stderr, "{}: {}\n", file, problem);
      if (!problems.empty()) return kExitFailure;
    }
    if (print) {
      fmt::print("{}", FormatConfig(std::get<Config>(result), ProbeTableSections()));
      return kExitOk;
    }
    fmt::print("numaprobe: {} is valid\n", file);
    // What a reload with it would disarm (the running daemon's state file).
    if (!syntax_only) {
      for (const std::string& line : BaselineImpact(std::get<Config>(result))) fmt::print("numaprobe: {}\n", line);
    }
    return kExitOk;
  }
};

}  // namespace

void AddCheckConfigCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<CheckConfigCommand>();
  CLI::App* sub = app.add_subcommand("check-config", "Validate a config file; exit 1 listing every error");
  // No CLI::ExistingFile: a missing file is reported like any other config
  // error (exit 1, naming the file), not as a usage error (exit 2).
  sub->add_option("FILE", command->file, "The YAML config file to check")->required();
  sub->add_flag("--syntax-only", command->syntax_only,
                "Check the file alone, not whether its CPUs, nodes and lock file are usable on this host "
                "(for configs meant for other hosts)");
  sub->add_flag("--print", command->print,
                "Print the effective configuration (every key, defaults included) as YAML instead of the verdict");
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
