// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/scheduler.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "daemon/common/host_info.h"
#include "daemon/common/task_limits.h"
#include "daemon/common/test_hooks.h"
#include "daemon/common/version.h"
#include "daemon/config/config_values.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/budget.h"
#include "daemon/serve/host_watch.h"
#include "daemon/serve/lock_wait_meter.h"
#include "daemon/serve/own_schedule.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/results/result_model.h"
#include "daemon/serve/rotation.h"
#include "daemon/serve/state.h"
#include "kernels/file_read.h"
#include "kernels/thread_start.h"

namespace numaprobe::daemon {

namespace k = kernels;

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
      : env_(std::move(env)),
        config_(std::move(config)),
        topology_(std::move(topology)),
        lock_(std::move(lock)),
        budget_(config_.schedule.duty_cycle),
        model_(store, env_->OpenState(config_.state_directory), config_,
               env_->StateSaveSpacingNs().value_or(kSaveSpacingNs)),
        test_(env_->Hooks()),
        rng_(env_->JitterSeed()),
        watchdog_(env_->WatchdogInterval()),
        executor_(std::move(executor)) {
    host_watch_ = HostWatch(env_->HostFactRoots());
    FixTaskCostsIfAsked();
    Adopt(std::move(plan));
    // What the last run of this daemon learnt of the schedule (or the test's fixed costs).
    if (!costs_.fixed()) costs_ = model_.schedule().costs;
  }

  void RequestStop() {
    stop_.store(true);
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }

  // An unchanged config on SIGHUP: only look at the state directory (how
  // `numaprobe baseline accept` and `reset` reach the daemon), without
  // restarting the round.
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
    // After a start or a replan the first round runs the representatives
    // alone: /-/ready and a first figure of every class come within that
    // round's cost, whatever the rest of the plan costs.
    bool representatives_only = true;
    // Where the process's own CPU starts: the first run pays for the start.
    own_cpu_charged_ = 0;
    (void)env_->OwnCpuSeconds();
    while (!stop_.load()) {
      if (ApplyPendingChanges()) representatives_only = true;
      const Rotation rotation = SplitRound(RoundTasks(plan_, config_, topology_), topology_);
      SetBudget();
      const int rounds = RotationRounds(rotation, costs_, RoundBudgetCpuSeconds());
      AnnounceRotation(rotation, rounds);
      const std::string signature = RotationSignature(rotation);
      const int round = representatives_only ? -1 : NextRound(signature, rounds);
      CheckHost();
      const std::int64_t round_start = env_->MonotonicNs();
      const RoundEnd end = RunRound(round < 0 ? Representatives(rotation) : RoundOfCycle(rotation, rounds, round));
      if (end == RoundEnd::kAbandoned) {
        // The abandoned probe touches nothing the model holds.
        model_.Save(Now(), /*force=*/true);
        return false;
      }
      if (end == RoundEnd::kComplete) {
        EndRound(round_start, rotation, rounds);
        if (round >= 0) Remember(signature, round, rounds);
        representatives_only = false;
      }
      if (!RunOwnSchedules()) {
        model_.Save(Now(), /*force=*/true);
        return false;
      }
      WaitForNextRound(round_start);
    }
    model_.Save(Now(), /*force=*/true);
    return true;
  }

 private:
  enum class RoundEnd { kComplete, kCutShort, kAbandoned };

  Moment Now() { return Moment{env_->MonotonicNs(), env_->UnixNow()}; }
  ScheduleClock Clock() { return ScheduleClock{env_->MonotonicNs(), env_->UnixNow()}; }

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
      if (!RunTask(tasks[i], tasks, i, !continues, ends_visit, budget_)) return RoundEnd::kAbandoned;
    }
    executor_->ReleaseBuffers();  // also after a round cut short mid-visit
    return complete && !stop_.load() ? RoundEnd::kComplete : RoundEnd::kCutShort;
  }

  // The kinds on a schedule of their own (own_schedule.h), between rounds:
  // what is due, visit by visit, while each kind's own budget allows; the
  // rest waits for a later round's end. False if a probe was abandoned.
  bool RunOwnSchedules() {
    if (own_.empty() || stop_.load()) return true;
    std::vector<Task>& queue = own_.Due(Clock(), [&](const ProbeKind& kind) { return model_.Recording(kind.name()); });
    std::size_t i = 0;
    for (; i < queue.size(); ++i) {
      const bool continues = i > 0 && SharesBuffers(queue[i - 1], queue[i]);
      DutyBudget& budget = own_.Budget(*queue[i].kind);
      if (stop_.load() || ChangesPending() || (!continues && budget.next_allowed_ns() > env_->MonotonicNs())) break;
      const bool ends_visit = i + 1 == queue.size() || !SharesBuffers(queue[i], queue[i + 1]);
      const std::optional<k::Outcome> outcome = RunTask(queue[i], queue, i, !continues, ends_visit, budget);
      if (!outcome) return false;
      if (*outcome == k::Outcome::kSkipped) own_.Skipped(queue[i]);
    }
    executor_->ReleaseBuffers();
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(i));
    // A finished cycle, and the thread counts its runs found, are saved at
    // once: a daemon that crashes soon after each start must not repeat it.
    if (auto cycles = own_.FinishedCycles(); cycles != model_.schedule().own_cycles) {
      ScheduleMemory memory = model_.schedule();
      memory.own_cycles = std::move(cycles);
      model_.KeepSchedule(std::move(memory), /*urgent=*/true);
      model_.Save(Now());
    }
    return true;
  }

  void WaitForNextRound(std::int64_t round_start_ns) {
    std::uniform_real_distribution<double> jitter(1 - config_.schedule.jitter, 1 + config_.schedule.jitter);
    const auto interval_ns = static_cast<std::int64_t>(
        std::chrono::duration<double, std::nano>(config_.schedule.interval).count() * jitter(rng_));
    WaitUntil(round_start_ns + interval_ns);
  }

  // The budget: the learning budget while a planned series still records its
  // baseline (arming sooner what there is to measure), else duty_cycle.
  // The one writer of numaprobe_duty_cycle_budget_ratio: published at every
  // plan and round, so the metric is the budget in force, whatever a replan
  // left in the snapshot.
  void SetBudget() {
    const std::size_t host_cpus = topology_.cpus().size() + topology_.disallowed_cpus().size();
    const double ratio = model_.Recording() ? LearningDutyCycle(config_, host_cpus) : config_.schedule.duty_cycle;
    if (ratio == budget_.ratio()) return;
    spdlog::info("probe budget {:.4g}% of one CPU ({})", ratio * 100,
                 model_.Recording() ? "learning: series still record their baseline"
                                    : "every planned series has its baseline");
    budget_.set_ratio(ratio);
    model_.UseBudget(ratio);
  }

  // The probe CPU time one interval's budget allows.
  double RoundBudgetCpuSeconds() const {
    return budget_.ratio() * std::chrono::duration<double>(config_.schedule.interval).count();
  }

  // The next round of the cycle: after the one the last round ran (also the
  // last run of the daemon: the state file keeps it), on the same tasks.
  int NextRound(const std::string& signature, int rounds) const {
    const RotationPosition& p = model_.schedule().position;
    return p.tasks == signature ? (p.round + 1) % rounds : 0;
  }

  void Remember(const std::string& signature, int round, int rounds) {
    ScheduleMemory memory = model_.schedule();
    memory.costs = costs_;
    memory.position = RotationPosition{signature, round, rounds};
    model_.KeepSchedule(std::move(memory));
  }

  // Says when the schedule starts rotating, changes its number of rounds or
  // stops rotating, each in words that are true of that change.
  void AnnounceRotation(const Rotation& rotation, int rounds) {
    const int before = announced_rounds_;
    if (rounds == before) return;
    announced_rounds_ = rounds;
    const std::optional<double> full = FullRoundCpuSeconds(rotation, costs_);
    const std::string cost = full ? fmt::format("{:.2f} CPU-s", *full) : std::string("not known yet");
    const double allowed = kRotateAbove * RoundBudgetCpuSeconds();
    if (rounds > 1) {
      spdlog::info(
          "schedule: {} tasks; {} every round (one pair per probe kind and node distance), {} in rotation over {} "
          "rounds: {} (a full round costs {}, more than {} x budget x interval = {:.2f} CPU-s)",
          rotation.tasks.size(), rotation.every_round.size(), rotation.rotated_tasks(), rounds,
          before > 1 ? fmt::format("the number of rounds changed from {}", before) : std::string("starting to rotate"),
          cost, kRotateAbove, allowed);
    } else if (before > 1) {
      spdlog::info(
          "schedule: {} tasks, all of them every round: rotation stopped (a full round costs {}, {} {} x "
          "budget x interval = {:.2f} CPU-s)",
          rotation.tasks.size(), cost, full ? "at most" : "so it cannot be compared with", kRotateAbove, allowed);
    }
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
      RefreshWhileIdle(now);
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
  // held lock): refresh it while waiting, not only when a probe ends. A state
  // write put off by its spacing happens here too.
  void RefreshWhileIdle(std::int64_t now) {
    if (now - duty_published_ns_ < 5'000'000'000) return;
    duty_published_ns_ = now;
    model_.Publish([&](Snapshot& s) { s.duty_cycle_ratio = budget_.ObservedRatio(now); });
    model_.Save(Now());
  }

  // SIGHUP without a new configuration: an operator's request, and a look at
  // the host's facts as a round would take.
  void ReloadStateIfAsked() {
    if (!reload_state_.exchange(false)) return;
    model_.ReloadState(Now());
    CheckHost();
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

  // True if the plan was rebuilt.
  bool ApplyPendingChanges() {
    std::optional<Config> next;
    {
      std::lock_guard lock(mu_);
      next.swap(pending_);
    }
    const bool restriction_changed = !SameRestriction(env_->Restriction(), restriction_);
    if (!next && !restriction_changed) return false;
    if (next) {
      config_ = std::move(*next);
      executor_->SetPriority(config_.schedule.priority);
      model_.Reconfigure(env_->OpenState(config_.state_directory), config_);
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
      return false;
    }
    topology_ = std::move(topology);
    Adopt(std::move(plan).value());
    return true;
  }

  // Installs a new plan (start, reload or cpuset change) and everything derived from it.
  void Adopt(Plan plan) {
    plan_ = std::move(plan);
    restriction_ = env_->Restriction();
    for (const auto& note : plan_.notes) spdlog::info("plan: {}", note);
    std::string runs;
    std::map<const ProbeKind*, int> runs_of;
    std::vector<ProbeTarget> targets;
    std::set<SeriesKey> series;
    for (Task& task : RoundTasks(plan_, config_, topology_)) {
      ++runs_of[task.kind];
      if (task.kind->HasBaseline()) series.insert(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
      targets.push_back(std::move(task.target));
    }
    // What the host facts name as the probing CPUs: fixed until the next plan.
    probe_cpus_by_node_ = ProbeCpusByNode(targets, topology_);
    for (const ProbeKind* kind : ProbeTable()) {
      if (runs_of.contains(kind)) runs += fmt::format(", {} {}", runs_of[kind], kind->name());
    }
    spdlog::info("probe plan: {} memory pairs; runs per round{}", plan_.memory_pairs.size(),
                 runs.empty() ? ": none" : runs);
    std::vector<Task> own = OwnScheduleTasks(plan_, config_, topology_);
    std::map<const ProbeKind*, int> own_runs_of;
    for (const Task& task : own) {
      ++own_runs_of[task.kind];
      if (task.kind->HasBaseline()) series.insert(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
    }
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
    const std::string fingerprint = HostFingerprint(host_, topology_, config_.memory.pages);
    // Until a round completes, the configured interval is the best estimate.
    refresh_interval_seconds_ = std::chrono::duration<double>(config_.schedule.interval).count();
    const PlannedHost planned{config_,          topology_, plan_, host_, fingerprint, TopologySignature(topology_),
                              std::move(series)};
    model_.Plan(planned, HostNow(), host_watch_.last(), Now());
    // After Plan: whether series record is known now.
    SetBudget();
    // After Plan: at start it restored when the last cycles ran.
    own_.Adopt(std::move(own), config_, model_.schedule().own_cycles, Clock());
    AnnounceOwnSchedules(own_runs_of);
    model_.Publish([&](Snapshot& s) {
      s.refresh_interval_seconds = refresh_interval_seconds_;
      s.test_fault_injection_active = test_.fault_injection_active();
    });
  }

  // NUMAPROBE_TEST_TASK_COSTS: the schedule of a test must not depend on how
  // fast the machine runs (cmd_serve refused to start on a file it cannot use).
  void FixTaskCostsIfAsked() {
    if (test_.task_costs_file.empty()) return;
    std::string text;
    TaskCostEstimate fixed;
    std::string error = k::ReadWholeFile(test_.task_costs_file, text) != 0
                            ? fmt::format("cannot read {}", test_.task_costs_file)
                            : TaskCostEstimate::Parse(text, test_.task_costs_file, fixed);
    if (!error.empty()) {
      spdlog::error("{}: task costs are learnt from the runs", error);
      return;
    }
    costs_ = std::move(fixed);
    costs_.Fix();
  }

  // Every round: a setting changed at run time (THP, NUMA balancing, a
  // hugepage pool) is a host change the next figures are read against.
  void CheckHost() { model_.ObserveHost(HostNow(), host_watch_.last(), Now()); }

  // Every fact as it is now: HostFacts of the planned host and the runtime facts.
  HostObservation HostNow() {
    auto facts = HostFacts(host_, config_.memory.pages, kVersionFact);
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
  // watches for stop, charging `budget`; the ResultModel takes what it
  // produced. Its outcome, or none if stopping left it unfinished.
  std::optional<k::Outcome> RunTask(const Task& task, std::vector<Task>& round, std::size_t index, bool starts_visit,
                                    bool ends_visit, DutyBudget& budget) {
    const std::int64_t start_ns = env_->MonotonicNs();
    // Confirmations and retries are said: they are runs beyond the schedule.
    spdlog::debug("starting {}{}", Describe(task),
                  task.confirmation  ? " (confirmation)"
                  : task.attempt > 0 ? " (retry)"
                                     : "");
    Task run = task;
    if (task.kind->HasBaseline()) {
      run.found_threads = model_.FoundThreads(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
    }
    run.published = model_.PublishedRecords();
    executor_->Start(run, ends_visit, &stop_);
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
        return std::nullopt;
      }
    }
    const std::int64_t end_ns = env_->MonotonicNs();
    const ProbeRun ran = executor_->Result();
    const k::Outcome outcome = ran.record->outcome();
    // The run, and what the process spent for probing since the last charge
    // outside runs (the start, plans, host facts, state writes): the budget
    // is the process's, not only its kernels'.
    const double own = env_->OwnCpuSeconds();
    budget.Charge(start_ns, end_ns, ran.cpu_seconds + std::max(0.0, own - own_cpu_charged_));
    own_cpu_charged_ = std::max(own_cpu_charged_, own);
    // A cancelled or skipped run, or one that could not start its threads,
    // says nothing of what the kind costs: learning its ~0 s would plan full rounds.
    if (outcome != k::Outcome::kCancelled && outcome != k::Outcome::kThreadLimit && outcome != k::Outcome::kSkipped) {
      costs_.Observe(task.kind, ran.cpu_seconds, starts_visit);
    }
    // A figure beyond its band needs confirming (the model says), unless
    // NUMAPROBE_TEST_CONFIRMATIONS=off keeps a test's rounds to their schedule.
    const bool confirm = model_.Land(task, ran, Moment{end_ns, env_->UnixNow()}, [&](Snapshot& s) {
      lock_wait_.Finished(ran.lock_wait_seconds);
      s.probe_lock_wait_seconds = lock_wait_.TotalSeconds(end_ns);
      s.probe_lock_holder.reset();
      s.duty_cycle_ratio = budget_.ObservedRatio(end_ns);
    });
    if (outcome == k::Outcome::kOk) {
      spdlog::debug("{}: ok ({:.1f} ms CPU)", Describe(task), ran.cpu_seconds * 1e3);
    } else if (outcome == k::Outcome::kSkipped) {
      // Routine on a busy host: counted (numaprobe_probe_runs_total), retried after the next round.
      spdlog::info("{}: skipped: {}", Describe(task), ran.record->reason());
    } else if (outcome != k::Outcome::kCancelled) {
      // A thread that could not be created: say which limit was reached.
      spdlog::warn("{}: {}: {}{}", Describe(task), k::OutcomeName(outcome), ran.record->reason(),
                   outcome == k::Outcome::kThreadLimit ? " (" + DescribeTaskLimits() + ")" : "");
    }
    // Disturbed runs are retried once at the end of the round, within the budget.
    if (outcome == k::Outcome::kDisturbed && task.attempt == 0) {
      Task retry = task;
      retry.attempt = 1;
      round.push_back(retry);
    }
    // After the last use of `task`: inserting into `round` may move it.
    if (confirm && !test_.confirmations_off) {
      spdlog::debug("{}: figure beyond its band, {} confirmation runs next", Describe(round[index]),
                    SeriesHistory::kConfirmationRuns);
      QueueConfirmations(round, index, SeriesHistory::kConfirmationRuns);
    }
    return outcome;
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
      model_.Publish([&](Snapshot& s) {
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

  // Says each own-schedule kind's runs, interval and budget, and when its
  // last cycle began (after a restart: why it does not run at once).
  void AnnounceOwnSchedules(const std::map<const ProbeKind*, int>& runs_of) {
    for (const auto& [kind, count] : runs_of) {
      const OwnSchedule schedule = kind->OwnScheduleOf(config_).value_or(OwnSchedule{});
      const auto& cycles = model_.schedule().own_cycles;
      const auto last = cycles.find(kind->name());
      spdlog::info(
          "{}: {} runs every {} (at once while its baseline records), within {:.4g}% of one CPU of its own; {}",
          kind->name(), count, FormatDuration(schedule.interval), schedule.duty_cycle * 100,
          last == cycles.end() ? std::string("no cycle finished yet")
                               : fmt::format("its last finished cycle began {} ago",
                                             FormatDuration(std::chrono::seconds(static_cast<std::int64_t>(
                                                 std::max(0.0, env_->UnixNow() - last->second))))));
    }
  }

  // `rounds`: the rounds of the cycle. A rotated series gets a figure once a
  // cycle, so that is the refresh interval staleness is judged against; a
  // representative's is one round.
  void EndRound(std::int64_t round_start_ns, const Rotation& rotation, int rounds) {
    const double round_seconds = static_cast<double>(env_->MonotonicNs() - round_start_ns) / 1e9;
    const double every_round =
        std::max(std::chrono::duration<double>(config_.schedule.interval).count(), round_seconds);
    refresh_interval_seconds_ = rounds * every_round;
    RefreshOf refresh{every_round, refresh_interval_seconds_, {}, own_.IntervalSeconds()};
    for (std::size_t i : rotation.every_round) {
      const Task& task = rotation.tasks[i];
      if (task.kind->HasBaseline())
        refresh.every_round.insert(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
    }
    model_.SetRefresh(std::move(refresh));
    if (test_.fault_injection_active()) {
      spdlog::error("TEST FAULT INJECTION ACTIVE: figures are scaled ({}); never in production",
                    test_.DescribeScales(""));
    }
    model_.Publish([&](Snapshot& s) {
      ++s.rounds_completed;
      s.refresh_interval_seconds = refresh_interval_seconds_;
      s.rotation_rounds = rounds;
    });
  }

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
  ProbeLock lock_;  // the worker uses it during a job; replaced only between jobs
  std::atomic<bool> lock_busy_logged_{false};
  LockWaitMeter lock_wait_;
  std::int64_t duty_published_ns_ = 0;
  double own_cpu_charged_ = 0;  // env_->OwnCpuSeconds() at the last charge
  DutyBudget budget_;
  OwnScheduleQueue own_;  // the kinds on a schedule of their own, with their budgets
  ResultModel model_;
  HostWatch host_watch_;
  TaskCostEstimate costs_;
  int announced_rounds_ = 0;  // the rotation last logged (0: none yet)
  double refresh_interval_seconds_ = 0;
  TestHooks test_;
  std::mt19937_64 rng_;
  std::optional<std::chrono::milliseconds> watchdog_;
  // Last: destroyed (its worker joined) first; its runs use the lock and topology above.
  std::unique_ptr<ProbeExecutor> executor_;
};

k::Expected<std::unique_ptr<Scheduler>> Scheduler::Create(Config config, ResultStore& store,
                                                          std::unique_ptr<LoopEnvironment> host) {
  const ProbePriority priority = config.schedule.priority;
  return Create(std::move(config), store, std::move(host), WorkerExecutor(priority));
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
