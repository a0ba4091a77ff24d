// SPDX-License-Identifier: Apache-2.0
// `numaprobe reload`: what `systemctl reload numaprobe` does, for every
// deployment: check the configuration as a reload would, then send SIGHUP to
// the `numaprobe serve` that uses its state directory. In a container (no
// shell, no kill) it runs as `podman exec NAME numaprobe reload`, in a
// DaemonSet pod as `kubectl exec POD -- numaprobe reload`.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "daemon/cli/baseline_impact.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/serve_target.h"

namespace numaprobe::daemon {

namespace {

struct ReloadCommand {
  ServeTarget target;

  int Run() const {
    // A configuration the daemon would refuse is not sent: it would keep its
    // old one and say so only in its log and metrics.
    const std::optional<Config> config = target.LoadConfig(true);
    if (!config) {
      fmt::print(stderr, "numaprobe: not reloaded: the configuration has errors\n");
      return kExitFailure;
    }
    const std::string file = target.ConfigFile();
    const std::string dir = target.state_directory.empty() ? config->state_directory : target.state_directory;
    // Said before it is done: a valid change can still disarm drift alerts.
    Config reloaded = *config;
    reloaded.state_directory = dir;
    for (const std::string& line : BaselineImpact(reloaded)) fmt::print("numaprobe: {}\n", line);
    return ReloadServe(dir,
                       "reads " + (file.empty() ? std::string("its configuration") : file) +
                           " and its web configuration again",
                       false);
  }
};

}  // namespace

void AddReloadCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<ReloadCommand>();
  CLI::App* sub =
      app.add_subcommand("reload", "Check the configuration, then make the running numaprobe serve reload it (SIGHUP)");
  command->target.Register(*sub);
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
