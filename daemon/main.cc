// SPDX-License-Identifier: Apache-2.0
// numaprobe: continuous NUMA memory latency, bandwidth and core-to-core
// probing. main() only parses the command line and dispatches to commands.
#include <fmt/format.h>

#include "daemon/cli/commands.h"
#include "daemon/common/log.h"
#include "daemon/common/version.h"

int main(int argc, char** argv) {
  using namespace numaprobe::daemon;
  SetUpCommandLogging();  // serve replaces it with --log.level/--log.format
  CLI::App app{
      "numaprobe: measures the memory latency and bandwidth cores get from local and remote "
      "NUMA nodes, and core-to-core latency",
      "numaprobe"};
  // As Prometheus exporters print it (node_exporter --version).
  app.set_version_flag("--version",
                       fmt::format("numaprobe, version {} (branch: {}, revision: {})\n"
                                   "  build user:       {}\n"
                                   "  build date:       {}\n"
                                   "  compiler:         {}\n"
                                   "  platform:         {}",
                                   kVersion, kBranch, kRevision, kBuildUser, kBuildDate, kCompiler, kPlatform));
  // Every option bound to a value shows it in --help ("--log.level TEXT=info");
  // the subcommands inherit this. Options whose default is not a value
  // (every node, the built-in configuration) say it in their help.
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  CommandAction run;
  AddProbeCommand(app, run);
  AddTopologyCommand(app, run);
  AddServeCommand(app, run);
  AddBaselineCommand(app, run);
  AddReloadCommand(app, run);
  AddCheckConfigCommand(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports an unknown command as a missing one; name it instead.
    const bool unknown_command = argc > 1 && argv[1][0] != '-' &&
                                 app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty();
    if (unknown_command) {
      fmt::print(stderr, "numaprobe: unknown command '{}'\n", argv[1]);
    } else {
      fmt::print(stderr, "numaprobe: {}\n", e.what());
    }
    fmt::print(stderr, "Run 'numaprobe --help' for usage.\n");
    return kExitUsage;
  }
  return run();
}
