// numaprobe: continuous NUMA memory latency, bandwidth and core-to-core
// probing. main() only parses the command line and dispatches to commands.
#include <fmt/format.h>

#include "daemon/commands.h"
#include "daemon/version.h"

int main(int argc, char** argv) {
  using namespace numaprobe::daemon;
  CLI::App app{"numaprobe: measures the memory latency and bandwidth cores get from local and remote "
               "NUMA nodes, and core-to-core latency",
               "numaprobe"};
  app.set_version_flag("--version", fmt::format("numaprobe, version {} (revision: {})", kVersion, kRevision));
  app.require_subcommand(1);
  CommandAction run;
  AddProbeCommand(app, run);
  AddTopologyCommand(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "numaprobe: {}\nRun 'numaprobe --help' for usage.\n", e.what());
    return kExitUsage;
  }
  return run();
}
