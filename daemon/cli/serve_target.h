// SPDX-License-Identifier: Apache-2.0
// What `numaprobe reload` and `numaprobe baseline accept|reset` share: which
// `numaprobe serve` they act on (the one whose state directory the
// configuration names, daemon/common/serve_lock.h) and how they tell it.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "daemon/config/config.h"

namespace numaprobe::daemon {

inline constexpr const char* kDefaultConfigFile = "/etc/numaprobe/numaprobe.yaml";

struct ServeTarget {
  std::string config_file;      // --config.file
  std::string state_directory;  // --state.directory, overrides the configuration's

  // Adds --config.file and --state.directory to `sub`.
  void Register(CLI::App& sub);

  // The configuration file: the flag, else the packaged one if it exists,
  // else "" (the built-in defaults, as `serve` without --config.file).
  std::string ConfigFile() const;

  // The configuration as `serve` would load it (with `check_on_host`, also
  // checked against this host as a reload would), or nullopt after printing
  // every error to stderr.
  std::optional<Config> LoadConfig(bool check_on_host) const;

  // The state directory: the flag, else the configuration's; nullopt after
  // printing why the configuration cannot be read.
  std::optional<std::string> StateDirectory() const;
};

// Sends SIGHUP to the serve that uses `state_directory` and prints what
// happened; `then` says what the reload does ("takes up the new configuration").
// kExitOk when it was signalled, or when none runs and `none_is_fine`.
int ReloadServe(const std::string& state_directory, const std::string& then, bool none_is_fine);

}  // namespace numaprobe::daemon
