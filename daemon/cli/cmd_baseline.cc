// `numaprobe baseline reset`: forget the stored baseline so the daemon records
// a new one (after a hardware change, BIOS setting or firmware update that the
// host fingerprint does not see).
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "daemon/cli/commands.h"
#include "daemon/config/config.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

namespace {

constexpr const char* kDefaultConfigFile = "/etc/numaprobe/numaprobe.yaml";

struct BaselineResetCommand {
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
        dir = Config{}.state_directory;
        return true;
      }
      path = kDefaultConfigFile;
    }
    const ConfigResult loaded = LoadConfigFile(path);
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
    if (const std::string error = ResetState(dir); !error.empty()) {
      fmt::print(stderr, "numaprobe: cannot reset the baseline: {}\n", error);
      return kExitFailure;
    }
    fmt::print("numaprobe: baseline reset in {}; reload (SIGHUP) or restart numaprobe to record a new one\n", dir);
    return kExitOk;
  }
};

}  // namespace

void AddBaselineCommand(CLI::App& app, CommandAction& run) {
  CLI::App* baseline = app.add_subcommand("baseline", "Manage the stored per-pair baseline");
  baseline->require_subcommand(1);
  auto command = std::make_shared<BaselineResetCommand>();
  CLI::App* reset = baseline->add_subcommand("reset", "Forget the stored baseline; the daemon records a new one");
  reset->add_option("--config.file", command->config_file,
                    fmt::format("Configuration file naming the state directory (default {})", kDefaultConfigFile));
  reset->add_option("--state.directory", command->state_directory,
                    "State directory; overrides the configuration file");
  reset->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
