// `numaprobe baseline reset` and `baseline accept`: replace the stored
// baseline by a marker, then reload the `numaprobe serve` that uses the state
// directory (SIGHUP, daemon/common/serve_lock.h) so that it records a new one
// now; a daemon that is not running takes the marker up at its next start.
// accept adopts the current level after a host change (origin accepted, the
// change series cleared); reset starts over for any other reason (a hardware
// change the daemon cannot see; origin reset).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "daemon/cli/commands.h"
#include "daemon/cli/serve_target.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

namespace {

struct BaselineMarkerCommand {
  std::string marker;  // "reset" | "accept"
  ServeTarget target;

  int Run() const {
    const std::optional<std::string> dir = target.StateDirectory();
    if (!dir) return kExitFailure;
    const bool accept = marker == "accept";
    if (const std::string error = ResetState(*dir, marker); !error.empty()) {
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
  CLI::App* baseline = app.add_subcommand("baseline", "Manage the stored per-pair baseline");
  baseline->require_subcommand(1);
  const auto add = [&](const char* name, const char* description) {
    auto command = std::make_shared<BaselineMarkerCommand>();
    command->marker = name;
    CLI::App* sub = baseline->add_subcommand(name, description);
    command->target.Register(*sub);
    sub->callback([&run, command] { run = [command] { return command->Run(); }; });
  };
  add("reset", "Forget the stored baseline; the running daemon is reloaded and records a new one");
  add("accept",
      "Accept the current level after a host change: the running daemon is reloaded, records a new baseline and "
      "clears the change series");
}

}  // namespace numaprobe::daemon
