// SPDX-License-Identifier: Apache-2.0
// Subcommands of the numaprobe binary. Each Add*Command registers its flags on
// `app` and, when the subcommand is selected, sets `run` to the action that
// main() calls after parsing. Exit codes: 0 success, 1 a probe or the machine
// failed, 2 bad arguments (the message names the flag, CPU or node).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace numaprobe::daemon {

using CommandAction = std::function<int()>;

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

void AddProbeCommand(CLI::App& app, CommandAction& run);
void AddTopologyCommand(CLI::App& app, CommandAction& run);
void AddCheckConfigCommand(CLI::App& app, CommandAction& run);
void AddServeCommand(CLI::App& app, CommandAction& run);
void AddBaselineCommand(CLI::App& app, CommandAction& run);
void AddReloadCommand(CLI::App& app, CommandAction& run);

}  // namespace numaprobe::daemon
