#include "daemon/serve/scheduler.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <random>

#include "daemon/common/host_info.h"
#include "daemon/common/task_limits.h"
#include "daemon/common/test_hooks.h"
#include "daemon/common/version.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/baseline_tracker.h"
#include "daemon/serve/budget.h"
#include "daemon/serve/host_watch.h"
#include "daemon/serve/lock_wait_meter.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/recent_figures.h"
#include "daemon/serve/rotation.h"
#include "daemon/serve/snapshot_update.h"
#include "daemon/serve/state.h"
#include "kernels/thread_start.h"

namespace numaprobe::daemon {

namespace k = kernels;

k::Expected<Plan> PlanOnHost(const Config& config, k::Topology* topology_out) {
  auto topology = k::Topology::FromHost();
  if (!topology.ok()) return topology.failure();
  auto plan = BuildPlan(config.targets, topology.value());
  if (plan.ok() && topology_out != nullptr) *topology_out = std::move(topology).value();
  return plan;
}

std::vector<std::string> CheckOnHost(const Config& config) {
  std::vector<std::string> problems;
  if (auto plan = PlanOnHost(config); !plan.ok()) problems.push_back(plan.failure().reason);
  if (auto lock = ProbeLock::Open(config.probe_lock_file); !lock.ok()) {
    problems.push_back(lock.failure().reason + " (probe_lock_file: \"\" disables host-wide exclusion)");
  }
  return problems;
}

namespace {

// "latency cpu 3 -> node 1": how logs name a probe run.
std::string Describe(const Task& task) { return task.kind->Describe(task.target); }

bool SameRestriction(const k::Restriction& a, const k::Restriction& b) {
  return a.cpus == b.cpus && a.mem_nodes == b.mem_nodes;
}

}  // namespace

class Scheduler::Loop {
 public:
  Loop(Config config, ResultStore& store, k::Topology topology, Plan plan, ProbeLock lock,
       std::unique_ptr<LoopEnvironment> env, std::unique_ptr<ProbeExecutor> executor)
      : store_(store),
        env_(std::move(env)),
        config_(std::move(config)),
        topology_(std::move(topology)),
        lock_(std::move(lock)),
        budget_(config_.schedule.duty_cycle),
        baseline_(config_.state_directory, config_.baseline.rounds),
        rng_(std::random_device{}()),
        watchdog_(env_->WatchdogInterval()),
        executor_(std::move(executor)) {
    // cmd_serve refused to start on an invalid hook; nothing is faked then.
    if (!ReadTestHooks(test_, TestScaledKinds()).empty()) test_ = TestHooks{};
    host_watch_ = HostWatch(FactRootsOf(test_));
    Adopt(std::move(plan));
  }

  void RequestStop() {
    stop_.store(true);
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }

  // An unchanged config on SIGHUP: only re-read the state file (how
  // `numaprobe baseline reset` reaches the daemon), without restarting the round.
  void RequestStateReload() {
    reload_state_.store(true);
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }

  void RequestReload(Config config) {
    std::lock_guard lock(mu_);
    pending_ = std::move(config);
    cv_.notify_all();
  }

  // False if a probe had to be abandoned at stop (see ProbeWorker).
  bool Run() {
    while (!stop_.load()) {
      ApplyPendingChanges();
      const Rotation rotation = SplitRound(RoundTasks(plan_, config_, topology_), topology_);
      const int rounds = RotationRounds(rotation, costs_, RoundBudgetCpuSeconds());
      AnnounceRotation(rotation, rounds);
      // The baseline takes its values from complete cycles: every pair once.
      baseline_.BeginRound();
      bool cycle_complete = true;
      for (int r = 0; r < rounds && cycle_complete; ++r) {
        CheckHost();
        const std::int64_t round_start = env_->MonotonicNs();
        const RoundEnd end = RunRound(RoundOfCycle(rotation, rounds, r));
        if (end == RoundEnd::kAbandoned) return false;
        cycle_complete = end == RoundEnd::kComplete;
        if (cycle_complete) EndRound(round_start, rounds);
        // Published and saved as soon as the cycle's last round ends, not an
        // interval later.
        if (cycle_complete && r + 1 == rounds) EndCycle();
        WaitForNextRound(round_start);
      }
    }
    return true;
  }

 private:
  enum class RoundEnd { kComplete, kCutShort, kAbandoned };

  // Runs one round's tasks; cut short by stop, reload or a cpuset change.
  RoundEnd RunRound(std::vector<Task> tasks) {
    bool complete = !tasks.empty();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const bool continues = i > 0 && SharesBuffers(tasks[i - 1], tasks[i]);
      if ((!continues && !WaitUntil(budget_.next_allowed_ns())) || stop_.load() || ChangesPending()) {
        complete = false;
        break;
      }
      const bool ends_visit = i + 1 == tasks.size() || !SharesBuffers(tasks[i], tasks[i + 1]);
      if (!RunTask(tasks[i], tasks, i, !continues, ends_visit)) return RoundEnd::kAbandoned;
    }
    executor_->ReleaseBuffers();  // also after a round cut short mid-visit
    return complete && !stop_.load() ? RoundEnd::kComplete : RoundEnd::kCutShort;
  }

  void WaitForNextRound(std::int64_t round_start_ns) {
    std::uniform_real_distribution<double> jitter(1 - config_.schedule.jitter, 1 + config_.schedule.jitter);
    const auto interval_ns = static_cast<std::int64_t>(
        std::chrono::duration<double, std::nano>(config_.schedule.interval).count() * jitter(rng_));
    WaitUntil(round_start_ns + interval_ns);
  }

  // The probe CPU time one interval's budget allows.
  double RoundBudgetCpuSeconds() const {
    return config_.schedule.duty_cycle * std::chrono::duration<double>(config_.schedule.interval).count();
  }

  // Says when the schedule starts, changes or stops rotating.
  void AnnounceRotation(const Rotation& rotation, int rounds) {
    if (rounds == announced_rounds_) return;
    if (rounds > 1 || announced_rounds_ > 1) {
      spdlog::info(
          "schedule: {} tasks; {} every round (one pair per probe kind and node distance), {} in rotation "
          "over {} rounds (a full round costs more CPU than duty_cycle x interval allows)",
          rotation.tasks.size(), rotation.every_round.size(), rotation.rotated_tasks(), rounds);
    }
    announced_rounds_ = rounds;
  }

  // Sleeps until `deadline_ns` (monotonic), waking for stop, reload and the
  // systemd watchdog. False if stopping; true early if a change is pending.
  bool WaitUntil(std::int64_t deadline_ns) {
    while (true) {
      env_->Notify("WATCHDOG=1");
      if (stop_.load()) return false;
      ReloadStateIfAsked();
      if (ChangesPending()) return true;
      const std::int64_t now = env_->MonotonicNs();
      RefreshDutyCycle(now);
      if (now >= deadline_ns) return true;
      std::int64_t wait_ns = deadline_ns - now;
      if (watchdog_) wait_ns = std::min<std::int64_t>(wait_ns, watchdog_->count() * 1'000'000);
      // Re-check the cpuset (and refresh the duty cycle) at least every 10 s while idle.
      wait_ns = std::min<std::int64_t>(wait_ns, 10'000'000'000);
      std::unique_lock lock(mu_);
      env_->Sleep(lock, cv_, wait_ns, [&] { return stop_.load() || pending_.has_value() || reload_state_.load(); });
    }
  }

  // The observed duty cycle also falls while nothing runs (long intervals, a
  // held lock): refresh it while waiting, not only when a probe ends.
  void RefreshDutyCycle(std::int64_t now) {
    if (now - duty_published_ns_ < 5'000'000'000) return;
    duty_published_ns_ = now;
    store_.Update([&](Snapshot& s) { s.duty_cycle_ratio = budget_.ObservedRatio(now); });
  }

  void ReloadStateIfAsked() {
    if (!reload_state_.exchange(false)) return;
    LoadBaseline();
    store_.Update([&](Snapshot& s) { baseline_.Publish(s); });
  }

  // A reload, or a change of the CPUs / memory nodes this process may use
  // (container cpusets change at run time), restarts the round on a new plan.
  bool ChangesPending() {
    {
      std::lock_guard lock(mu_);
      if (pending_) return true;
    }
    return !SameRestriction(env_->Restriction(), restriction_);
  }

  void ApplyPendingChanges() {
    std::optional<Config> next;
    {
      std::lock_guard lock(mu_);
      next.swap(pending_);
    }
    const bool restriction_changed = !SameRestriction(env_->Restriction(), restriction_);
    if (!next && !restriction_changed) return;
    if (next) {
      config_ = std::move(*next);
      budget_.set_ratio(config_.schedule.duty_cycle);
      executor_->SetPriority(config_.schedule.priority);
    }
    if (restriction_changed) spdlog::info("allowed CPUs or memory nodes changed: rebuilding the probe plan");
    k::Topology topology;
    auto plan = env_->PlanNow(config_, &topology);
    if (!plan.ok()) {
      // Explicitly configured CPUs or nodes left the allowed set. Keep probing
      // them: their runs fail (pin_failed, bind_failed, placement_mismatch once
      // cgroup v2 has migrated the pages) and withdraw their figures, so the
      // operator sees why, instead of a plan that silently shrank.
      spdlog::error("the configured targets are no longer allowed ({}); their probes will report failures",
                    plan.failure().reason);
      restriction_ = env_->Restriction();
      return;
    }
    topology_ = std::move(topology);
    Adopt(std::move(plan).value());
  }

  // Installs a new plan (start, reload or cpuset change) and everything derived from it.
  void Adopt(Plan plan) {
    plan_ = std::move(plan);
    restriction_ = env_->Restriction();
    for (const auto& note : plan_.notes) spdlog::info("plan: {}", note);
    std::string runs;
    std::map<const ProbeKind*, int> runs_of;
    std::vector<ProbeTarget> targets;
    for (Task& task : RoundTasks(plan_, config_, topology_)) {
      ++runs_of[task.kind];
      targets.push_back(std::move(task.target));
    }
    // What the host facts name as the probing CPUs: fixed until the next plan.
    probe_cpus_by_node_ = ProbeCpusByNode(targets, topology_);
    for (const ProbeKind* kind : ProbeTable()) {
      if (runs_of.contains(kind)) runs += fmt::format(", {} {}", runs_of[kind], kind->name());
    }
    spdlog::info("probe plan: {} memory pairs; runs per round{}", plan_.memory_pairs.size(),
                 runs.empty() ? ": none" : runs);
    if (config_.probe_lock_file != lock_.path()) {
      // cmd_serve checked that it opens; it can still have gone since.
      auto lock = ProbeLock::Open(config_.probe_lock_file);
      if (lock.ok()) {
        lock_ = std::move(lock).value();
      } else {
        spdlog::error("{}; probes keep using {}", lock.failure().reason, lock_.path());
      }
    }
    ProbeSettings settings = ProbeSettingsFrom(config_);
    // 1 unless NUMAPROBE_TEST_MODE (test_hooks.h)
    settings.test_scales.insert(test_.scales.begin(), test_.scales.end());
    executor_->Adopt(topology_, config_, std::move(settings), lock_, [this] { OnLockBusy(); });
    host_ = host_watch_.ReadInfo(topology_.cpu_model);
    ApplyHostOverrides(test_, host_);
    fingerprint_ = HostFingerprint(host_, topology_, config_.memory.pages);
    baseline_.Reconfigure(config_.state_directory, config_.baseline.rounds);
    LoadBaseline();
    recent_.Clear();
    announced_rounds_ = 0;
    // Until a round completes, the configured interval is the best estimate.
    refresh_interval_seconds_ = std::chrono::duration<double>(config_.schedule.interval).count();
    store_.Update([&](Snapshot& s) {
      PlanSnapshot(s, config_, topology_, plan_, host_, fingerprint_);
      baseline_.Publish(s);
      s.recent_medians.clear();
      s.peer_medians.clear();
      s.refresh_interval_seconds = refresh_interval_seconds_;
      s.test_fault_injection_active = test_.fault_injection_active();
    });
  }

  void LoadBaseline() {
    baseline_.Load(fingerprint_, MeasurementSettings(config_), TopologySignature(topology_), HostNow(),
                   env_->UnixNow());
    store_.Update([&](Snapshot& s) { s.runtime_facts = host_watch_.last(); });
  }

  // Every round: a setting changed at run time (THP, NUMA balancing, a
  // hugepage pool) is a host change the next figures are read against.
  void CheckHost() {
    baseline_.ObserveHost(HostNow(), env_->UnixNow());
    store_.Update([&](Snapshot& s) {
      s.runtime_facts = host_watch_.last();
      baseline_.Publish(s);
    });
  }

  // Every fact as it is now: HostFacts of the planned host and the runtime facts.
  HostObservation HostNow() {
    auto facts = HostFacts(host_, config_.memory.pages, kVersion);
    if (const auto it = test_.host_overrides.find("numaprobe_version"); it != test_.host_overrides.end()) {
      facts["numaprobe_version"] = it->second;
    }
    return host_watch_.Observe(std::move(facts), probe_cpus_by_node_);
  }

  // On the worker thread, when a probe finds another process probing.
  void OnLockBusy() {
    lock_wait_.Started(env_->MonotonicNs());
    // A second daemon on the host makes this routine: say it once, count the
    // rest (and warn if one wait goes on for long, see WatchLockWait).
    const bool first = !lock_busy_logged_.exchange(true);
    spdlog::log(first ? spdlog::level::info : spdlog::level::debug, "the probe lock {} is held by {}: waiting for it",
                lock_.path(), HolderOfLock());
  }

  // Who holds the probe lock, for the log: a pid and a uid, or why not.
  std::string HolderOfLock() const {
    const std::optional<ProbeLockHolder> holder = lock_.Holder();
    return holder ? holder->Describe() : std::string("another process (not found in /proc/locks)");
  }

  // Runs `task` on the executor while this thread keeps the watchdog fed and
  // watches for stop. False if stopping left it unfinished.
  bool RunTask(const Task& task, std::vector<Task>& round, std::size_t index, bool starts_visit, bool ends_visit) {
    const std::int64_t start_ns = env_->MonotonicNs();
    // Confirmations and retries are said: they are runs beyond the schedule.
    spdlog::debug("starting {}{}", Describe(task),
                  task.confirmation  ? " (confirmation)"
                  : task.attempt > 0 ? " (retry)"
                                     : "");
    executor_->Start(task, ends_visit, &stop_);
    bool warned_wait = false;
    std::int64_t published_ns = start_ns;
    while (!executor_->Wait(std::chrono::milliseconds(50))) {
      env_->Notify("WATCHDOG=1");
      ReloadStateIfAsked();
      WatchLockWait(warned_wait, published_ns);
      // Kernels notice the stop flag between samples; a probe starved of CPU
      // (SCHED_IDLE on a saturated host) may not, and is left behind.
      if (stop_.load() && !executor_->Wait(std::chrono::milliseconds(250))) {
        executor_->Abandon();
        return false;
      }
    }
    const std::int64_t end_ns = env_->MonotonicNs();
    const ProbeRun ran = executor_->Result();
    const k::Outcome outcome = ran.record->outcome();
    const double cost = ran.cpu_seconds;
    // The figure the baseline keeps of it.
    std::optional<BaselineValue> baseline;
    if (ran.record->ok()) baseline = task.kind->BaselineOf(*ran.record, config_.targets.per_cpu);
    budget_.Charge(start_ns, end_ns, cost);
    // A cancelled run, or one that could not start its threads, says nothing
    // of what the kind costs: learning its ~0 s would plan full rounds.
    if (outcome != k::Outcome::kCancelled && outcome != k::Outcome::kThreadLimit) {
      costs_.Observe(task.kind, cost, starts_visit);
    }
    const bool ok = outcome == k::Outcome::kOk;
    const bool will_retry = outcome == k::Outcome::kDisturbed && task.attempt == 0;
    bool confirm = false;
    if (ok && baseline) {
      // A figure beyond its band while the series' median is inside it is
      // measured again next (RecentFigures::NeedsConfirmation); the
      // figure of a confirmation never is.
      const std::optional<double> band = task.kind->ConfirmationBand();
      confirm = !task.confirmation && band && recent_.NeedsConfirmation(*baseline, baseline_.ValueOf(*baseline), *band);
      baseline_.Observe(*baseline);
      recent_.Add(*baseline);
    }
    // Only kinds the baseline holds values for can leave a round incomplete:
    // a core-to-core pair that is always disturbed on a busy host must not
    // keep the memory baseline from ever being recorded.
    if (!ok && !will_retry && task.kind->HasBaseline()) baseline_.ObserveFailure();
    store_.Update([&](Snapshot& s) {
      RecordRun(s, ran.record, env_->UnixNow(), cost);
      lock_wait_.Finished(ran.lock_wait_seconds);
      s.probe_lock_wait_seconds = lock_wait_.TotalSeconds(end_ns);
      s.probe_lock_holder.reset();
      s.duty_cycle_ratio = budget_.ObservedRatio(end_ns);
      if (ok && baseline) {
        s.recent_medians = recent_.Medians();
        s.peer_medians = recent_.Medians(RecentFigures::kPeerWindow);
      }
    });
    if (ok) {
      spdlog::debug("{}: ok ({:.1f} ms CPU)", Describe(task), cost * 1e3);
    } else if (outcome != k::Outcome::kCancelled) {
      // A thread that could not be created: say which limit was reached.
      spdlog::warn("{}: {}: {}{}", Describe(task), k::OutcomeName(outcome), ran.record->reason(),
                   outcome == k::Outcome::kThreadLimit ? " (" + DescribeTaskLimits() + ")" : "");
    }
    // Disturbed runs are retried once at the end of the round, within the budget.
    if (will_retry) {
      Task retry = task;
      retry.attempt = 1;
      round.push_back(retry);
    }
    // After the last use of `task`: inserting into `round` may move it.
    if (confirm) {
      spdlog::debug("{}: figure beyond its band, {} confirmation runs next", Describe(round[index]),
                    RecentFigures::kConfirmationRuns);
      QueueConfirmations(round, index, RecentFigures::kConfirmationRuns);
    }
    return true;
  }

  // While a probe waits for another process's lock: publish the wait every
  // second, and warn once per wait after a minute (a stuck or hostile holder
  // stops every probe; the watchdog rightly stays fed, the daemon is not hung).
  void WatchLockWait(bool& warned, std::int64_t& published_ns) {
    const std::int64_t now = env_->MonotonicNs();
    const double waiting = lock_wait_.CurrentSeconds(now);
    if (waiting == 0) return;
    if (now - published_ns >= 1'000'000'000) {
      published_ns = now;
      const std::optional<ProbeLockHolder> holder = lock_.Holder();
      store_.Update([&](Snapshot& s) {
        s.probe_lock_wait_seconds = lock_wait_.TotalSeconds(now);
        s.probe_lock_holder = holder;
      });
    }
    if (!warned && waiting >= 60) {
      warned = true;
      spdlog::warn(
          "probes have waited {:.0f} s for the probe lock {}, held by {}; nothing is measured until it lets go "
          "(any user who can open the file can hold it: docs/security.md)",
          waiting, lock_.path(), HolderOfLock());
    }
  }

  // `rounds`: the rounds of this cycle. A rotated series gets a figure once a
  // cycle, so that is the refresh interval staleness is judged against.
  void EndRound(std::int64_t round_start_ns, int rounds) {
    const double round_seconds = static_cast<double>(env_->MonotonicNs() - round_start_ns) / 1e9;
    refresh_interval_seconds_ =
        rounds * std::max(std::chrono::duration<double>(config_.schedule.interval).count(), round_seconds);
    if (test_.fault_injection_active()) {
      spdlog::error("TEST FAULT INJECTION ACTIVE: figures are scaled ({}); never in production",
                    test_.DescribeScales(""));
    }
    store_.Update([&](Snapshot& s) {
      ++s.rounds_completed;
      s.refresh_interval_seconds = refresh_interval_seconds_;
      s.rotation_rounds = rounds;
    });
  }

  void EndCycle() {
    baseline_.EndRound();
    store_.Update([&](Snapshot& s) { baseline_.Publish(s); });
  }

  ResultStore& store_;
  std::unique_ptr<LoopEnvironment> env_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> reload_state_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Config> pending_;  // guarded by mu_

  // Owned by the loop thread.
  Config config_;
  k::Topology topology_;
  Plan plan_;
  std::map<int, std::vector<int>> probe_cpus_by_node_;  // of plan_'s round (Adopt)
  k::Restriction restriction_;
  HostInfo host_;
  std::string fingerprint_;
  ProbeLock lock_;  // the worker uses it during a job; replaced only between jobs
  std::atomic<bool> lock_busy_logged_{false};
  LockWaitMeter lock_wait_;
  std::int64_t duty_published_ns_ = 0;
  DutyBudget budget_;
  BaselineTracker baseline_;
  HostWatch host_watch_;
  RecentFigures recent_;
  TaskCostEstimate costs_;
  int announced_rounds_ = 0;  // the rotation last logged (0: none yet since the last plan)
  double refresh_interval_seconds_ = 0;
  TestHooks test_;
  std::mt19937_64 rng_;
  std::optional<std::chrono::milliseconds> watchdog_;
  // Last: destroyed (its worker joined) first; its runs use the lock and topology above.
  std::unique_ptr<ProbeExecutor> executor_;
};

k::Expected<std::unique_ptr<Scheduler>> Scheduler::Create(Config config, ResultStore& store) {
  const ProbePriority priority = config.schedule.priority;
  return Create(std::move(config), store, HostEnvironment(), WorkerExecutor(priority));
}

k::Expected<std::unique_ptr<Scheduler>> Scheduler::Create(Config config, ResultStore& store,
                                                          std::unique_ptr<LoopEnvironment> env,
                                                          std::unique_ptr<ProbeExecutor> executor) {
  k::Topology topology;
  auto plan = env->PlanNow(config, &topology);
  if (!plan.ok()) return plan.failure();
  auto lock = ProbeLock::Open(config.probe_lock_file);
  if (!lock.ok()) return lock.failure();
  return std::unique_ptr<Scheduler>(
      new Scheduler(std::make_unique<Loop>(std::move(config), store, std::move(topology), std::move(plan).value(),
                                           std::move(lock).value(), std::move(env), std::move(executor))));
}

Scheduler::Scheduler(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

Scheduler::~Scheduler() {
  if (!Stop()) {
    // A probe thread still runs on our state: the owner should have exited.
    (void)loop_.release();
  }
}

std::string Scheduler::Start() {
  auto started = k::StartThread("scheduler", [this] { finished_ = loop_->Run(); });
  if (!started.ok()) return started.failure().reason + " (" + DescribeTaskLimits() + ")";
  thread_ = std::move(started).value();
  return "";
}

bool Scheduler::Stop() {
  loop_->RequestStop();
  if (thread_.joinable()) thread_.join();
  return finished_;
}

void Scheduler::Reload(Config config) { loop_->RequestReload(std::move(config)); }

void Scheduler::ReloadState() { loop_->RequestStateReload(); }

}  // namespace numaprobe::daemon
