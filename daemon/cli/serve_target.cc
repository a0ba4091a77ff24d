// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/serve_target.h"

#include <fmt/format.h>
#include <signal.h>

#include <filesystem>
#include <system_error>
#include <variant>
#include <vector>

#include "daemon/cli/commands.h"
#include "daemon/common/serve_lock.h"
#include "daemon/probing/plan_on_host.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

void ServeTarget::Register(CLI::App& sub) {
  sub.add_option("--config.file", config_file,
                 fmt::format("The configuration file numaprobe serve runs with (default {} if it exists, else the "
                             "built-in defaults)",
                             kDefaultConfigFile));
  sub.add_option("--state.directory", state_directory,
                 "The state directory of numaprobe serve; overrides the configuration file's");
}

std::string ServeTarget::ConfigFile() const {
  if (!config_file.empty()) return config_file;
  std::error_code ec;
  return std::filesystem::exists(kDefaultConfigFile, ec) ? kDefaultConfigFile : "";
}

std::optional<Config> ServeTarget::LoadConfig(bool check_on_host) const {
  const std::string path = ConfigFile();
  if (path.empty()) return Config{};
  const ConfigResult loaded = LoadConfigFile(path, ProbeTableSections());
  if (const auto* errors = std::get_if<std::vector<ConfigError>>(&loaded)) {
    for (const ConfigError& error : *errors) fmt::print(stderr, "{}: {}\n", path, error.ToString());
    return std::nullopt;
  }
  const Config& config = std::get<Config>(loaded);
  if (check_on_host) {
    const std::vector<std::string> problems = CheckOnHost(config);
    for (const std::string& problem : problems) fmt::print(stderr, "{}: {}\n", path, problem);
    if (!problems.empty()) return std::nullopt;
  }
  return config;
}

std::optional<std::string> ServeTarget::StateDirectory() const {
  if (!state_directory.empty()) return state_directory;
  std::optional<Config> config = LoadConfig(false);
  if (!config) {
    fmt::print(stderr, "numaprobe: cannot read the state directory from {}\n", ConfigFile());
    return std::nullopt;
  }
  return config->state_directory;
}

int ReloadServe(const std::string& state_directory, const std::string& then, bool none_is_fine) {
  using Outcome = SignalResult::Outcome;
  const SignalResult result = SignalServe(state_directory, SIGHUP);
  switch (result.outcome) {
    case Outcome::kSignalled:
      fmt::print("numaprobe: sent SIGHUP to numaprobe serve (pid {}), which {}\n", result.pid, then);
      return kExitOk;
    case Outcome::kNotRunning:
      if (none_is_fine) {
        fmt::print("numaprobe: no numaprobe serve runs on {} now; the next one to start takes it up\n",
                   state_directory);
        return kExitOk;
      }
      fmt::print(stderr, "numaprobe: no numaprobe serve runs on {} (nothing holds {})\n", state_directory,
                 ServeLockPath(state_directory));
      return kExitFailure;
    case Outcome::kOtherNamespace:
      fmt::print(stderr,
                 "numaprobe: {}: run this command where it runs (podman exec NAME numaprobe ..., kubectl exec POD -- "
                 "numaprobe ...), or send it SIGHUP from there\n",
                 result.error);
      return kExitFailure;
    case Outcome::kFailed:
      break;
  }
  fmt::print(stderr, "numaprobe: {}\n", result.error);
  return kExitFailure;
}

}  // namespace numaprobe::daemon
