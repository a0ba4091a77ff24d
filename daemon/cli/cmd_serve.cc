// SPDX-License-Identifier: Apache-2.0
// `numaprobe serve`: the long-running exporter. The main thread owns signals
// (SIGTERM/SIGINT stop, SIGHUP reloads) and, between them, the node feature
// file; the scheduler thread probes; the HTTP server's threads serve from the
// ResultStore.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>

#include "daemon/cli/cli_flag_registry.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/fact_root_flags.h"
#include "daemon/common/log.h"
#include "daemon/common/memory_return.h"
#include "daemon/common/serve_lock.h"
#include "daemon/common/test_hooks.h"
#include "daemon/common/version.h"
#include "daemon/common/wall_clock.h"
#include "daemon/config/config.h"
#include "daemon/config/web_config.h"
#include "daemon/probing/plan_on_host.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/loop_environment.h"
#include "daemon/serve/node_feature_export.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/scheduler.h"
#include "daemon/serve/sd_notify.h"
#include "daemon/serve/task_cost_estimate.h"
#include "daemon/web/http.h"
#include "daemon/web/request_route.h"
#include "kernels/clock.h"
#include "kernels/file_read.h"
#include "kernels/page_sizes.h"

namespace numaprobe::daemon {
namespace {

// Loads and checks a config, logging every error; nullopt keeps the old one.
std::optional<Config> LoadChecked(const std::string& path) {
  Config config;
  if (!path.empty()) {
    ConfigResult result = LoadConfigFile(path, ProbeTableSections());
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

// Loads a web config (--web.config.file), logging every error; nullopt keeps
// the old one. "" is plain HTTP without authentication. The TLS files it
// names are read once, by the HttpServer that serves them (Start, or
// Reconfigure on SIGHUP), which names a bad one and keeps the running
// configuration: a separate check here would read every file twice.
std::optional<WebConfig> LoadWebChecked(const std::string& path) {
  if (path.empty()) return WebConfig{};
  WebConfigResult result = LoadWebConfigFile(path);
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
    for (const auto& e : *errors) spdlog::error("{}: {}", path, e.ToString());
    return std::nullopt;
  }
  return std::get<WebConfig>(std::move(result));
}

// What a started daemon owns. A local of ServeCommand::Run, so its members
// are destroyed in reverse order when Run returns: the server and the
// scheduler before the store they read.
struct Running {
  ResultStore store;
  Config config;                           // what the scheduler runs: a SIGHUP with the same config changes nothing
  NodeFeatureExport node_features{store};  // on the main thread, between signals
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<HttpServer> server;
  ServeLock serve_lock;  // held for as long as the state directory is this daemon's
};

// The next SIGTERM, SIGINT or SIGHUP, or 0 once `timeout` has passed
// without one (none: wait for a signal). They are blocked in every thread
// (see SetUpProcess), so they arrive only here; an interrupted wait is retried.
int NextSignal(const sigset_t& signals, std::optional<std::chrono::milliseconds> timeout) {
  for (;;) {
    if (!timeout) {
      int sig = 0;
      if (sigwait(&signals, &sig) == 0) return sig;
      continue;
    }
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*timeout);
    const timespec wait{static_cast<time_t>(seconds.count()),
                        static_cast<long>(std::chrono::nanoseconds(*timeout - seconds).count())};
    const int sig = sigtimedwait(&signals, nullptr, &wait);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
  }
}

struct ServeCommand {
  std::string config_file;
  std::string web_config_file;
  HttpOptions http;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  FactRootFlags paths;
  // Read once, at the start: what the scheduler's host hands the loop.
  FactRoots fact_roots;
  TestHooks hooks;

  void Register(CLI::App& sub) {
    sub.add_option("--config.file", config_file,
                   "YAML configuration file (default: built-in defaults, see config/numaprobe.yaml)");
    sub.add_option("--web.listen-address", http.listen_addresses, "Address to listen on, repeatable")
        ->take_all()
        ->default_str(ListDefault(http.listen_addresses));
    sub.add_option("--web.config.file", web_config_file,
                   "Web configuration file (exporter-toolkit format: TLS, basic auth, headers); re-read on SIGHUP");
    sub.add_option("--web.telemetry-path", http.telemetry_path, "Path under which to expose metrics")
        ->check([](const std::string& path) { return TelemetryPathProblem(path); });
    sub.add_option("--log.level", log_level, "Log level")->check(CLI::IsMember({"debug", "info", "warn", "error"}));
    sub.add_option("--log.format", log_format, "Log format")->check(CLI::IsMember({"logfmt", "json"}));
    paths.Register(sub);
  }

  // The daemon's life: set up, start, serve until SIGTERM/SIGINT (each SIGHUP
  // reloads), stop. Each step is a member below.
  int Run() {
    if (auto error = paths.Resolve(fact_roots); !error.empty()) {
      fmt::print(stderr, "numaprobe: {}\nRun 'numaprobe serve --help' for usage.\n", error);
      return kExitUsage;
    }
    sigset_t signals;
    if (const int code = SetUpProcess(signals); code != kExitOk) return code;
    if (!ReportTestHooks()) return kExitFailure;
    std::optional<Config> config = LoadChecked(config_file);
    if (!config) return kExitFailure;
    std::optional<WebConfig> web = LoadWebChecked(web_config_file);
    if (!web) return kExitFailure;
    http.web = *web;

    Running running;
    if (!StartServing(std::move(*config), running)) return kExitFailure;
    int sig = 0;
    // The main thread waits for signals; while a node feature directory is
    // configured it also keeps the feature file up to date in between.
    while ((sig = NextSignal(signals, running.node_features.Tick(running.config.node_feature_directory, UnixNow(),
                                                                 kernels::MonotonicNs()))) != SIGTERM &&
           sig != SIGINT) {
      if (sig == SIGHUP) HandleReload(running);
    }
    spdlog::info("Received {}, stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return Shutdown(running);
  }

  // Logging first, so every later problem is logged in the chosen format;
  // then the signal mask, before any thread starts, so that every thread
  // inherits it and only NextSignal() sees the signals.
  int SetUpProcess(sigset_t& signals) {
    if (auto error = SetUpLogging(log_level, log_format); !error.empty()) {
      fmt::print(stderr, "numaprobe: {}\n", error);
      return kExitUsage;
    }
    sigemptyset(&signals);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    spdlog::info("Starting numaprobe version={} revision={}", kVersion, kRevision);
    // The sizes every buffer's pages are chosen from (and reported with).
    if (const auto& pages = kernels::HostPageSizes(); pages.ok()) {
      spdlog::info("page sizes: {}", kernels::DescribePageSizes(pages.value()));
    } else {
      spdlog::error("page sizes: {}; every probe buffer will fail", pages.failure().reason);
    }
    if (geteuid() == 0) spdlog::warn("running as root: numaprobe needs no privileges, consider a dedicated user");
    return kExitOk;
  }

  // Reads the test hooks, once: the scheduler's host hands them to the loop.
  // They change host facts or figures: say so loudly, at error level, so a
  // test-mode daemon is never mistaken for a real one. False when the hooks
  // themselves are malformed.
  bool ReportTestHooks() {
    if (auto error = ReadTestHooks(hooks, TestScaledKinds()); !error.empty()) {
      spdlog::error("{}", error);
      return false;
    }
    for (const auto& [field, value] : hooks.host_overrides) {
      spdlog::error("TEST MODE: host fact {} overridden to \"{}\" (NUMAPROBE_TEST_HOST_OVERRIDES)", field, value);
    }
    if (!hooks.task_costs_file.empty()) {
      std::string text;
      TaskCostEstimate costs;
      if (kernels::ReadWholeFile(hooks.task_costs_file, text) != 0) {
        spdlog::error("NUMAPROBE_TEST_TASK_COSTS: cannot read {}", hooks.task_costs_file);
        return false;
      }
      if (auto error = TaskCostEstimate::Parse(text, hooks.task_costs_file, costs); !error.empty()) {
        spdlog::error("NUMAPROBE_TEST_TASK_COSTS: {}", error);
        return false;
      }
      spdlog::error(
          "TEST MODE: task costs fixed from {} (NUMAPROBE_TEST_TASK_COSTS): the schedule is not sized by the runs",
          hooks.task_costs_file);
    }
    if (hooks.confirmations_off) {
      spdlog::error(
          "TEST MODE: figures beyond their band are not confirmed (NUMAPROBE_TEST_CONFIRMATIONS=off): every round "
          "runs its schedule only");
    }
    if (hooks.fault_injection_active()) {
      spdlog::error("TEST FAULT INJECTION ACTIVE: {}; these figures are fake (numaprobe_test_fault_injection_active 1)",
                    hooks.DescribeScales(" figures"));
    }
    return true;
  }

  // Listens, plans the probes, then starts probing: a listener or a plan that
  // fails stops the start before any probe runs, and before the state
  // directory is acted on (Start restores the state and acts on a pending
  // `numaprobe baseline accept|reset` request): a second `serve` that cannot
  // bind the port leaves the running daemon's state alone. Tells systemd READY.
  bool StartServing(Config config, Running& running) {
    running.store.Update([](Snapshot& s) { s.config_reload_unix_seconds = UnixNow(); });
    running.config = config;
    if (http.listen_addresses.empty()) http.listen_addresses = {":10062"};
    auto server = HttpServer::Start(http, running.store);
    if (!server.ok()) {
      spdlog::error("{}", server.failure().reason);
      return false;
    }
    running.server = std::move(server).value();
    if (fact_roots.proc != "/proc" || fact_roots.sys != "/sys") {
      spdlog::info("host facts read from {} and {}", fact_roots.proc, fact_roots.sys);
    }
    auto scheduler = Scheduler::Create(std::move(config), running.store, HostEnvironment(hooks, fact_roots));
    if (!scheduler.ok()) {
      spdlog::error("cannot plan probes: {}", scheduler.failure().reason);
      return false;
    }
    running.scheduler = std::move(scheduler).value();
    for (int port : running.server->ListeningPorts()) spdlog::info("Listening on port {}", port);
    ClaimStateDirectory(running.config.state_directory, running);
    if (const std::string failed = running.scheduler->Start(); !failed.empty()) {
      spdlog::error("cannot start probing: {}", failed);
      return false;
    }
    SdNotify("READY=1\nSTATUS=Probing");
    return true;
  }

  // SIGHUP: re-reads the config and the web config, and applies both or
  // neither: each is checked first (the web config's TLS files are read by
  // HttpServer::Reconfigure, which changes nothing when they fail), and only
  // a reload that passes advances
  // numaprobe_config_last_reload_success_timestamp_seconds. A valid, changed
  // config replaces the running one; an unchanged one keeps the round going.
  void HandleReload(Running& running) {
    SdNotify("RELOADING=1");
    spdlog::info("Received SIGHUP, reloading {}", config_file.empty() ? "(built-in defaults)" : config_file);
    std::optional<Config> next = LoadChecked(config_file);
    std::optional<WebConfig> next_web = LoadWebChecked(web_config_file);
    // The parsers' garbage (up to a 1 MiB file's worth) is freed by now.
    ReturnFreedMemory();
    const bool ok = next.has_value() && next_web.has_value() && ApplyWeb(*running.server, *next_web);
    running.store.Update([&](Snapshot& s) {
      s.config_reload_successful = ok;
      if (ok) s.config_reload_unix_seconds = UnixNow();
    });
    if (!ok) {
      if (!web_config_file.empty()) spdlog::error("web config reload failed: keeping the running web configuration");
      spdlog::error("reload failed: keeping the running configuration");
    } else if (*next == running.config) {
      // Config management often sends SIGHUP on every run: an unchanged file
      // must not restart the round and drop the prepared buffers. The state
      // file is still re-read: SIGHUP is how `baseline reset` takes effect.
      spdlog::info("configuration unchanged");
      running.scheduler->ReloadState();
    } else {
      ClaimStateDirectory(next->state_directory, running);
      running.config = *next;
      running.scheduler->Reload(std::move(*next));
      spdlog::info("configuration reloaded");
    }
    SdNotify("READY=1");
  }

  // The serve lock in the state directory: how `numaprobe reload` and
  // `numaprobe baseline accept|reset` find this daemon, in a container or pod
  // too (daemon/common/serve_lock.h). Without it the daemon runs on; those
  // commands then say that no serve runs there.
  static void ClaimStateDirectory(const std::string& dir, Running& running) {
    if (running.serve_lock.held() && running.serve_lock.directory() == dir) return;
    running.serve_lock = ServeLock::Acquire(dir);
    if (!running.serve_lock.held()) {
      spdlog::warn(
          "{}: numaprobe reload and numaprobe baseline accept|reset cannot reach this daemon; send it "
          "SIGHUP to reload",
          running.serve_lock.error());
    }
  }

  // Stops probing, then serving. Running's members go when Run returns.
  static int Shutdown(Running& running) {
    SdNotify("STOPPING=1");
    if (!running.scheduler->Stop()) {
      // A probe starved of CPU (SCHED_IDLE on a saturated host) still runs on
      // the scheduler's state; do not wait for it, and do not tear that state
      // down under it: end the process here.
      spdlog::warn("a probe did not stop in time (starved of CPU, or inside a long sample); exiting without it");
      spdlog::shutdown();
      std::_Exit(kExitOk);
    }
    running.server.reset();
    spdlog::info("numaprobe stopped");
    return kExitOk;
  }

  // A checked web config (--web.config.file), on SIGHUP: a changed one
  // applies to every request from now on (HttpServer::Reconfigure: the
  // listeners stay open and responses in flight finish). False, with the
  // running one kept, when its TLS files cannot be used.
  bool ApplyWeb(HttpServer& server, const WebConfig& next) {
    if (web_config_file.empty()) return true;
    // With TLS, an unchanged file is still applied: the certificate files it
    // names may have been replaced in place (cert-manager, certbot), and
    // OpenSSL reads them only when a context is made.
    if (next == http.web && !next.tls) return true;
    if (std::string problem = server.Reconfigure(next); !problem.empty()) {
      spdlog::error("{}: {}", web_config_file, problem);
      return false;
    }
    http.web = next;
    spdlog::info("web configuration reloaded");
    return true;
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
