// `numaprobe baseline reset` and `baseline accept`: leave a request beside
// the state file (serve/results/state_file.h, kRequestFile) that the daemon
// acts on once at its next reload (SIGHUP) or restart: every series records a
// new baseline. accept adopts the current level after a host change (origin
// accepted, the change series cleared); reset starts over for any other
// reason (a hardware change the daemon cannot see; origin reset). The state
// file itself is left alone: the daemon keeps what else it learnt.
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "daemon/cli/commands.h"
#include "daemon/common/wall_clock.h"
#include "daemon/config/config.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

namespace {

constexpr const char* kDefaultConfigFile = "/etc/numaprobe/numaprobe.yaml";

// Tells this request from the next, so a request file the daemon cannot
// remove (a read-only directory) is acted on once.
std::string RequestId() {
  std::random_device random;
  return fmt::format("{}-{:08x}{:08x}", UtcNow("%Y%m%dT%H%M%SZ"), random(), random());
}

struct BaselineResetCommand {
  std::string marker;  // "reset" | "accept"
  std::string config_file;
  std::string state_directory;

  // The state directory, from the flag, else the config file, else the
  // built-in default: a host without a config file runs the daemon on
  // defaults too, so that is where its state lives.
  bool ResolveStateDirectory(std::string& dir) const {
    if (!state_directory.empty()) {
      dir = state_directory;
      return true;
    }
    std::string path = config_file;
    if (path.empty()) {
      std::error_code ec;
      if (!std::filesystem::exists(kDefaultConfigFile, ec)) {
        dir = kDefaultStateDirectory;
        return true;
      }
      path = kDefaultConfigFile;
    }
    const ConfigResult loaded = LoadConfigFile(path, ProbeTableSections());
    if (const auto* errors = std::get_if<std::vector<ConfigError>>(&loaded)) {
      fmt::print(stderr, "numaprobe: cannot use the configuration file {}:\n", path);
      for (const ConfigError& error : *errors) fmt::print(stderr, "  {}\n", error.ToString());
      return false;
    }
    dir = std::get<Config>(loaded).state_directory;
    return true;
  }

  int Run() const {
    std::string dir;
    if (!ResolveStateDirectory(dir)) return kExitFailure;
    const bool accept = marker == "accept";
    // No directory, no baseline: creating one here (as root, typically) could
    // leave the daemon a directory it cannot write to.
    std::error_code missing;
    if (!std::filesystem::is_directory(dir, missing)) {
      fmt::print("numaprobe: no state in {}: there is no baseline to {}\n", dir, accept ? "accept" : "reset");
      return kExitOk;
    }
    const OperatorRequest request{marker, RequestId()};
    if (const std::string error = WriteStateFile(dir, kRequestFile, FormatRequest(request)); !error.empty()) {
      fmt::print(stderr, "numaprobe: cannot {} the baseline: {}\n", accept ? "accept a new" : "reset", error);
      return kExitFailure;
    }
    if (accept) {
      fmt::print(
          "numaprobe: the current level will become the baseline (state in {}); reload (SIGHUP) or restart "
          "numaprobe to record it\n",
          dir);
    } else {
      fmt::print("numaprobe: baseline reset in {}; reload (SIGHUP) or restart numaprobe to record a new one\n", dir);
    }
    return kExitOk;
  }
};

}  // namespace

void AddBaselineCommand(CLI::App& app, CommandAction& run) {
  CLI::App* baseline = app.add_subcommand("baseline", "Manage the stored per-pair baseline");
  baseline->require_subcommand(1);
  const auto add = [&](const char* name, const char* description) {
    auto command = std::make_shared<BaselineResetCommand>();
    command->marker = name;
    CLI::App* sub = baseline->add_subcommand(name, description);
    sub->add_option("--config.file", command->config_file,
                    fmt::format("Configuration file naming the state directory (default {})", kDefaultConfigFile));
    sub->add_option("--state.directory", command->state_directory, "State directory; overrides the configuration file");
    sub->callback([&run, command] { run = [command] { return command->Run(); }; });
  };
  add("reset", "Forget the stored baseline; the daemon records a new one");
  add("accept",
      "Accept the current level after a host change: the daemon records a new baseline and clears the change series");
}

}  // namespace numaprobe::daemon
