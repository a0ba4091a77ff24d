// SPDX-License-Identifier: Apache-2.0
// `numaprobe baseline reset` and `baseline accept`: leave a request beside
// the state file (serve/results/state_file.h, kRequestFile) that the daemon
// acts on once, then reload the `numaprobe serve` that uses the state
// directory (SIGHUP, daemon/common/serve_lock.h) so that it acts now; a
// daemon that is not running takes the request up at its next start. accept
// adopts the level measured since the latest host change (origin accepted,
// the change series cleared; series with enough figures since stay armed:
// serve/results/series_history.h, AcceptLevel); reset records every series
// anew for any other reason (a hardware change the daemon cannot see; origin
// reset). The state file itself is left alone: the daemon keeps what else it
// learnt.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <system_error>

#include "daemon/cli/commands.h"
#include "daemon/cli/serve_target.h"
#include "daemon/common/wall_clock.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

namespace {

// Tells this request from the next, so a request file the daemon cannot
// remove (a read-only directory) is acted on once.
std::string RequestId() {
  std::random_device random;
  return fmt::format("{}-{:08x}{:08x}", UtcNow("%Y%m%dT%H%M%SZ"), random(), random());
}

struct BaselineRequestCommand {
  std::string action;  // "reset" | "accept"
  ServeTarget target;

  int Run() const {
    const std::optional<std::string> dir = target.StateDirectory();
    if (!dir) return kExitFailure;
    const bool accept = action == "accept";
    // No directory, no baseline: creating one here (as root, typically) could
    // leave the daemon a directory it cannot write to.
    std::error_code missing;
    if (!std::filesystem::is_directory(*dir, missing)) {
      fmt::print("numaprobe: no state in {}: there is no baseline to {}\n", *dir, accept ? "accept" : "reset");
      return kExitOk;
    }
    const OperatorRequest request{action, RequestId()};
    if (const std::string error = WriteStateFile(*dir, kRequestFile, FormatRequest(request)); !error.empty()) {
      fmt::print(stderr, "numaprobe: cannot {} the baseline: {}\n", accept ? "accept a new" : "reset", error);
      return kExitFailure;
    }
    if (accept) {
      fmt::print("numaprobe: the current level will become the baseline (state in {})\n", *dir);
    } else {
      fmt::print("numaprobe: baseline reset in {}\n", *dir);
    }
    return ReloadServe(*dir, accept ? "records the current level as the baseline now" : "records a new baseline now",
                       true);
  }
};

}  // namespace

void AddBaselineCommand(CLI::App& app, CommandAction& run) {
  CLI::App* baseline = app.add_subcommand("baseline", "Manage the stored per-series baseline");
  baseline->require_subcommand(1);
  const auto add = [&](const char* name, const char* description) {
    auto command = std::make_shared<BaselineRequestCommand>();
    command->action = name;
    CLI::App* sub = baseline->add_subcommand(name, description);
    command->target.Register(*sub);
    sub->callback([&run, command] { run = [command] { return command->Run(); }; });
  };
  add("reset", "Forget the stored baseline; the running daemon is reloaded and records a new one");
  add("accept",
      "Accept the current level after a host change: the running daemon is reloaded, takes the level measured "
      "since the change as the baseline (series with 5 figures since stay armed) and clears the change series");
}

}  // namespace numaprobe::daemon
