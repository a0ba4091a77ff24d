// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/scheduler.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <random>

#include "daemon/common/task_limits.h"
#include "daemon/common/test_hooks.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/serve/budget.h"
#include "daemon/serve/host_observer.h"
#include "daemon/serve/lock_wait_watch.h"
#include "daemon/serve/loop_requests.h"
#include "daemon/serve/own_schedule.h"
#include "daemon/serve/planned_runs.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/refresh_interval.h"
#include "daemon/serve/results/result_model.h"
#include "daemon/serve/results/series_history.h"
#include "daemon/serve/rotation.h"
#include "daemon/serve/rotation_announcer.h"
#include "daemon/serve/run_log.h"
#include "daemon/serve/state.h"
#include "kernels/thread_start.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

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
        lock_wait_(lock_, model_),
        test_(env_->Hooks()),
        host_(env_->HostFactRoots(), test_),
        rng_(env_->JitterSeed()),
        watchdog_(env_->WatchdogInterval()),
        executor_(std::move(executor)) {
    if (auto fixed = TestTaskCosts(test_)) costs_ = std::move(*fixed);
    Adopt(std::move(plan));
    // What the last run of this daemon learnt of the schedule (or the test's fixed costs).
    if (!costs_.fixed()) costs_ = model_.schedule().costs;
  }

  // The control thread's way in (Scheduler::Stop, Reload, ReloadState).
  LoopRequests& requests() { return requests_; }

  // False if a probe had to be abandoned at stop (see ProbeWorker).
  bool Run() {
    // After a start or a replan the first round runs the representatives
    // alone: /-/ready and a first figure of every class come within that
    // round's cost, whatever the rest of the plan costs.
    bool representatives_only = true;
    // Where the process's own CPU starts: the first run pays for the start.
    own_cpu_charged_ = 0;
    (void)env_->OwnCpuSeconds();
    while (!requests_.stopping()) {
      if (ApplyPendingChanges()) representatives_only = true;
      const Rotation rotation = SplitRound(RoundTasks(plan_, config_, topology_), topology_);
      SetBudget();
      const int rounds = RotationRounds(rotation, costs_, RoundBudgetCpuSeconds());
      announcer_.Announce(rotation, rounds, costs_, RoundBudgetCpuSeconds());
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

  // How RunQueue paces a queue: the budget each run is charged to, whether
  // a visit (SharesBuffers) may start now, and what a skipped run becomes.
  struct QueuePacing {
    std::function<DutyBudget&(const Task&)> budget_of;
    std::function<bool(const DutyBudget&)> may_start_visit;
    std::function<void(const Task&)> skipped = [](const Task&) {};
  };
  struct QueueEnd {
    std::size_t ran = 0;  // from the front of the queue
    bool whole = true;    // every run, none cut short by the pacing, a stop or a change
    bool abandoned = false;
  };

  // The one runner of rounds and own schedules: runs `queue` from the front
  // (a run may append retries and insert confirmations), visit by visit as
  // `pacing` allows, until a stop, a reload or a cpuset change.
  QueueEnd RunQueue(std::vector<Task>& queue, const QueuePacing& pacing) {
    QueueEnd end;
    for (; end.ran < queue.size(); ++end.ran) {
      const std::size_t i = end.ran;
      const bool continues = i > 0 && SharesBuffers(queue[i - 1], queue[i]);
      DutyBudget& budget = pacing.budget_of(queue[i]);
      if ((!continues && !pacing.may_start_visit(budget)) || requests_.stopping() || ChangesPending()) {
        end.whole = false;
        break;
      }
      const bool ends_visit = i + 1 == queue.size() || !SharesBuffers(queue[i], queue[i + 1]);
      const std::optional<k::Outcome> outcome = RunTask(queue[i], queue, i, !continues, ends_visit, budget);
      if (!outcome) {
        end.abandoned = true;
        return end;
      }
      if (*outcome == k::Outcome::kSkipped) pacing.skipped(queue[i]);
    }
    executor_->ReleaseBuffers();  // also after a queue cut short mid-visit
    return end;
  }

  // One round's tasks, each visit waiting for the budget.
  RoundEnd RunRound(std::vector<Task> tasks) {
    const QueueEnd end =
        RunQueue(tasks,
                 {.budget_of = [&](const Task&) -> DutyBudget& { return budget_; },
                  .may_start_visit = [&](const DutyBudget& budget) { return WaitUntil(budget.next_allowed_ns()); }});
    if (end.abandoned) return RoundEnd::kAbandoned;
    return !tasks.empty() && end.whole && !requests_.stopping() ? RoundEnd::kComplete : RoundEnd::kCutShort;
  }

  // The kinds on a schedule of their own (own_schedule.h), between rounds:
  // what is due, visit by visit, while each kind's own budget allows without
  // waiting; the rest waits for a later round's end. False if a probe was
  // abandoned.
  bool RunOwnSchedules() {
    if (own_.empty() || requests_.stopping()) return true;
    std::vector<Task>& queue = own_.Due(Clock(), [&](const ProbeKind& kind) { return model_.Recording(kind.name()); });
    const QueueEnd end =
        RunQueue(queue, {.budget_of = [&](const Task& task) -> DutyBudget& { return own_.Budget(*task.kind); },
                         .may_start_visit =
                             [&](const DutyBudget& budget) { return budget.next_allowed_ns() <= env_->MonotonicNs(); },
                         .skipped = [&](const Task& task) { own_.Skipped(task); }});
    if (end.abandoned) return false;
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(end.ran));
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

  // Sleeps until `deadline_ns` (monotonic), waking for stop, reload and the
  // systemd watchdog. False if stopping; true early if a change is pending.
  bool WaitUntil(std::int64_t deadline_ns) {
    while (true) {
      env_->Notify("WATCHDOG=1");
      if (requests_.stopping()) return false;
      ReloadStateIfAsked();
      if (ChangesPending()) return true;
      const std::int64_t now = env_->MonotonicNs();
      RefreshWhileIdle(now);
      if (now >= deadline_ns) return true;
      std::int64_t wait_ns = deadline_ns - now;
      if (watchdog_) wait_ns = std::min<std::int64_t>(wait_ns, watchdog_->count() * 1'000'000);
      // Re-check the cpuset (and refresh the duty cycle) at least every 10 s while idle.
      wait_ns = std::min<std::int64_t>(wait_ns, 10'000'000'000);
      requests_.Sleep(*env_, wait_ns);
    }
  }

  // The observed duty cycle also falls while nothing runs (long intervals, a
  // held lock): refresh it while waiting, not only when a probe ends. A state
  // write put off by its spacing happens here too.
  void RefreshWhileIdle(std::int64_t now) {
    if (now - duty_published_ns_ < 5'000'000'000) return;
    duty_published_ns_ = now;
    model_.DutyObserved(budget_.ObservedRatio(now));
    model_.Save(Now());
  }

  // SIGHUP without a new configuration: an operator's request, and a look at
  // the host's facts as a round would take.
  void ReloadStateIfAsked() {
    if (!requests_.TakeStateReload()) return;
    model_.ReloadState(Now());
    CheckHost();
  }

  // A reload, or a change of the CPUs / memory nodes this process may use
  // (container cpusets change at run time), restarts the round on a new plan.
  bool ChangesPending() { return requests_.ConfigPending() || !SameRestriction(env_->Restriction(), restriction_); }

  // True if the plan was rebuilt.
  bool ApplyPendingChanges() {
    std::optional<Config> next = requests_.TakeConfig();
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
    PlannedRuns runs = RunsOfPlan(plan_, config_, topology_);
    LogPlan(plan_, runs);
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
    executor_->Adopt(topology_, config_, std::move(settings), lock_, [this] { lock_wait_.Busy(env_->MonotonicNs()); });
    // Its runs' targets name the CPUs whose runtime facts are read until the next plan.
    const HostInfo& host = host_.Plan(topology_, runs.round_targets);
    const std::string fingerprint = HostFingerprint(host, topology_, config_.memory.pages);
    const PlannedHost planned{config_,
                              topology_,
                              plan_,
                              host,
                              fingerprint,
                              TopologySignature(topology_),
                              std::move(runs.series),
                              std::chrono::duration<double>(config_.schedule.interval).count(),
                              test_.fault_injection_active()};
    model_.Plan(planned, host_.Now(config_.memory.pages), host_.last(), Now());
    // After Plan: whether series record is known now.
    SetBudget();
    // After Plan: at start it restored when the last cycles ran.
    own_.Adopt(std::move(runs.own), config_, model_.schedule().own_cycles, Clock());
    own_.Announce(model_.schedule().own_cycles, env_->UnixNow());
  }

  // Every round: a setting changed at run time (THP, NUMA balancing, a
  // hugepage pool) is a host change the next figures are read against.
  void CheckHost() { model_.ObserveHost(host_.Now(config_.memory.pages), host_.last(), Now()); }

  // Runs `task` on the executor while this thread keeps the watchdog fed and
  // watches for stop, charging `budget`; the ResultModel takes what it
  // produced. Its outcome, or none if stopping left it unfinished.
  std::optional<k::Outcome> RunTask(const Task& task, std::vector<Task>& round, std::size_t index, bool starts_visit,
                                    bool ends_visit, DutyBudget& budget) {
    const std::int64_t start_ns = env_->MonotonicNs();
    LogRunStart(task);
    Task run = task;
    if (task.kind->traits().has_baseline) {
      run.found_threads = model_.FoundThreads(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
    }
    run.published = model_.PublishedRecords();
    lock_wait_.RunStarted(start_ns);
    executor_->Start(run, ends_visit, requests_.stop_flag());
    while (!executor_->Wait(std::chrono::milliseconds(50))) {
      env_->Notify("WATCHDOG=1");
      ReloadStateIfAsked();
      lock_wait_.Poll(env_->MonotonicNs());
      // Kernels notice the stop flag between samples; a probe starved of CPU
      // (SCHED_IDLE on a saturated host) may not, and is left behind.
      if (requests_.stopping() && !executor_->Wait(std::chrono::milliseconds(250))) {
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
    const LoopFacts loop{budget_.ObservedRatio(end_ns), lock_wait_.RunEnded(ran.lock_wait_seconds, end_ns)};
    const bool confirm = model_.Land(task, ran, Moment{end_ns, env_->UnixNow()}, loop);
    // A figure beyond its band needs confirming (the model says), unless
    // NUMAPROBE_TEST_CONFIRMATIONS=off keeps a test's rounds to their schedule.
    const int confirmations = confirm && !test_.confirmations_off ? SeriesHistory::kConfirmationRuns : 0;
    LogRunEnd(task, ran, confirmations);
    // After the last use of `task`: inserting into `round` may move it.
    QueueFollowUps(round, index, outcome, confirmations);
    return outcome;
  }

  // A complete round that began at `round_start_ns`, of `rounds` in the cycle.
  void EndRound(std::int64_t round_start_ns, const Rotation& rotation, int rounds) {
    const double round_seconds = static_cast<double>(env_->MonotonicNs() - round_start_ns) / 1e9;
    RefreshOf refresh = RefreshAfterRound(rotation, rounds, round_seconds, config_, own_.IntervalSeconds());
    if (test_.fault_injection_active()) {
      spdlog::error("TEST FAULT INJECTION ACTIVE: figures are scaled ({}); never in production",
                    test_.DescribeScales(""));
    }
    model_.RoundEnded(std::move(refresh), rounds);
  }

  std::unique_ptr<LoopEnvironment> env_;
  LoopRequests requests_;

  // Owned by the loop thread.
  Config config_;
  k::Topology topology_;
  Plan plan_;
  k::Restriction restriction_;
  ProbeLock lock_;  // the worker uses it during a job; replaced only between jobs
  std::int64_t duty_published_ns_ = 0;
  double own_cpu_charged_ = 0;  // env_->OwnCpuSeconds() at the last charge
  DutyBudget budget_;
  OwnScheduleQueue own_;  // the kinds on a schedule of their own, with their budgets
  ResultModel model_;
  LockWaitWatch lock_wait_;  // of lock_, published to model_
  TaskCostEstimate costs_;
  RotationAnnouncer announcer_;
  TestHooks test_;
  HostObserver host_;  // after env_ and test_: reads facts where the environment says
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
  loop_->requests().RequestStop();
  if (thread_.joinable()) thread_.join();
  return finished_;
}

void Scheduler::Reload(Config config) { loop_->requests().RequestReload(std::move(config)); }

void Scheduler::ReloadState() { loop_->requests().RequestStateReload(); }

}  // namespace numaprobe::daemon
