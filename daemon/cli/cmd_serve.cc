// `numaprobe serve`: the long-running exporter. The main thread owns signals
// (SIGTERM/SIGINT stop, SIGHUP reloads); the scheduler thread probes; civetweb
// threads serve HTTP from the ResultStore.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "daemon/cli/commands.h"
#include "daemon/config/config.h"
#include "daemon/web/http.h"
#include "daemon/common/log.h"
#include "daemon/common/test_hooks.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/scheduler.h"
#include "daemon/serve/sd_notify.h"
#include "daemon/common/version.h"
#include "daemon/common/wall_clock.h"

namespace numaprobe::daemon {
namespace {

// Loads and checks a config, logging every error; nullopt keeps the old one.
std::optional<Config> LoadChecked(const std::string& path) {
  Config config;
  if (!path.empty()) {
    ConfigResult result = LoadConfigFile(path);
    if (auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
      for (const auto& e : *errors) spdlog::error("{}: {}", path, e.ToString());
      return std::nullopt;
    }
    config = std::get<Config>(std::move(result));
  }
  const std::string source = path.empty() ? "built-in defaults" : path;
  const std::vector<std::string> problems = CheckOnHost(config);
  for (const std::string& problem : problems) spdlog::error("{}: {}", source, problem);
  if (!problems.empty()) return std::nullopt;
  return config;
}

struct ServeCommand {
  std::string config_file;
  HttpOptions http;
  std::string log_level = "info";
  std::string log_format = "logfmt";

  void Register(CLI::App& sub) {
    sub.add_option("--config.file", config_file, "YAML configuration file (default: built-in defaults, see config/numaprobe.yaml)");
    sub.add_option("--web.listen-address", http.listen_addresses, "Address to listen on, repeatable (default :10062)")
        ->take_all();
    sub.add_option("--web.telemetry-path", http.telemetry_path, "Path under which to expose metrics")
        ->check([](const std::string& p) { return p.size() > 1 && p[0] == '/' ? "" : "must start with / and not be /"; });
    sub.add_option("--log.level", log_level, "Log level")->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    sub.add_option("--log.format", log_format, "Log format")->check(CLI::IsMember({"logfmt", "json"}));
  }

  int Run() {
    if (auto error = SetUpLogging(log_level, log_format); !error.empty()) {
      fmt::print(stderr, "numaprobe: {}\n", error);
      return kExitUsage;
    }
    // Block the signals before any thread starts so that every thread inherits
    // the mask and only sigwait() below sees them.
    sigset_t signals;
    sigemptyset(&signals);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    spdlog::info("Starting numaprobe version={} revision={}", kVersion, kRevision);
    if (geteuid() == 0) spdlog::warn("running as root: numaprobe needs no privileges, consider a dedicated user");
    TestHooks hooks;
    if (auto error = ReadTestHooks(hooks); !error.empty()) {
      spdlog::error("{}", error);
      return kExitFailure;
    }
    for (const auto& [field, value] : hooks.host_overrides) {
      spdlog::error("TEST MODE: host fact {} overridden to \"{}\" (NUMAPROBE_TEST_HOST_OVERRIDES)", field, value);
    }
    if (hooks.fault_injection_active()) {
      spdlog::error("TEST FAULT INJECTION ACTIVE: latency figures x{}, bandwidth figures x{}; these figures are fake "
                    "(numaprobe_test_fault_injection_active 1)",
                    hooks.latency_scale, hooks.bandwidth_scale);
    }
    std::optional<Config> config = LoadChecked(config_file);
    if (!config) return kExitFailure;

    ResultStore store;
    store.Update([](Snapshot& s) { s.config_reload_unix_seconds = UnixNow(); });
    Config running = *config;
    auto scheduler = Scheduler::Create(*config, store);
    if (!scheduler.ok()) {
      spdlog::error("cannot plan probes: {}", scheduler.failure().reason);
      return kExitFailure;
    }
    if (http.listen_addresses.empty()) http.listen_addresses = {":10062"};
    auto server = HttpServer::Start(http, store);
    if (!server.ok()) {
      spdlog::error("{}", server.failure().reason);
      return kExitFailure;
    }
    for (int port : server.value()->ListeningPorts()) spdlog::info("Listening on port {}", port);
    scheduler.value()->Start();
    SdNotify("READY=1\nSTATUS=Probing");

    while (true) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (sig != SIGHUP) {
        spdlog::info("Received {}, stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        break;
      }
      SdNotify("RELOADING=1");
      spdlog::info("Received SIGHUP, reloading {}", config_file.empty() ? "(built-in defaults)" : config_file);
      std::optional<Config> next = LoadChecked(config_file);
      store.Update([&](Snapshot& s) {
        s.config_reload_successful = next.has_value();
        if (next) s.config_reload_unix_seconds = UnixNow();
      });
      if (next && *next == running) {
        // Config management often sends SIGHUP on every run: an unchanged file
        // must not restart the round and drop the prepared buffers. The state
        // file is still re-read: SIGHUP is how `baseline reset` takes effect.
        spdlog::info("configuration unchanged");
        scheduler.value()->ReloadState();
      } else if (next) {
        running = *next;
        scheduler.value()->Reload(std::move(*next));
        spdlog::info("configuration reloaded");
      } else {
        spdlog::error("reload failed: keeping the running configuration");
      }
      SdNotify("READY=1");
    }
    SdNotify("STOPPING=1");
    if (!scheduler.value()->Stop()) {
      // A probe starved of CPU (SCHED_IDLE on a saturated host) still runs on
      // the scheduler's state; do not wait for it, and do not tear that state
      // down under it: end the process here.
      spdlog::warn("a probe did not stop in time (starved of CPU, or inside a long sample); exiting without it");
      spdlog::shutdown();
      std::_Exit(kExitOk);
    }
    server.value().reset();
    spdlog::info("numaprobe stopped");
    return kExitOk;
  }
};

}  // namespace

void AddServeCommand(CLI::App& app, CommandAction& run) {
  auto command = std::make_shared<ServeCommand>();
  CLI::App* sub = app.add_subcommand("serve", "Run the exporter: probe on a schedule, serve Prometheus metrics");
  command->Register(*sub);
  sub->callback([&run, command] { run = [command] { return command->Run(); }; });
}

}  // namespace numaprobe::daemon
