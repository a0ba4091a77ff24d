// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/preview.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "daemon/probing/probe_table.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/rotation.h"
#include "daemon/serve/scheduler.h"
#include "kernels/stats.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

constexpr std::int64_t kStep = 60 * kSimulatedSecond;  // how often the preview looks

// One simulated life of the daemon: a host, a store and a running loop.
struct Life {
  ResultStore store;
  SimulatedHost* host = nullptr;
  std::unique_ptr<Scheduler> scheduler;

  static k::Expected<std::unique_ptr<Life>> Start(const Config& config, const SimulatedHost::TopologySource& topology,
                                                  const k::Restriction& restriction, const TaskCostEstimate& costs,
                                                  std::shared_ptr<std::map<std::string, std::string>> files,
                                                  std::int64_t start_ns) {
    auto life = std::make_unique<Life>();
    auto host = std::make_unique<SimulatedHost>(topology, restriction, TestHooks{}, std::move(files), start_ns);
    life->host = host.get();
    // Each life ends with a clean stop, which saves: a write an hour is enough.
    host->save_spacing_ns = 3600 * kSimulatedSecond;
    auto executor = std::make_unique<SimulatedExecutor>(*host, costs);
    auto created = Scheduler::Create(config, life->store, std::move(host), std::move(executor));
    if (!created.ok()) return created.failure();
    life->scheduler = std::move(created).value();
    if (auto error = life->scheduler->Start(); !error.empty()) return k::Failure{k::Outcome::kThreadLimit, error};
    return life;
  }
  ~Life() {
    if (scheduler) scheduler->Stop();
  }
  Snapshot Now() const { return *store.Current(); }
};

double TotalCpu(const Snapshot& s) {
  double total = 0;
  for (const auto& [probe, seconds] : s.cpu_seconds_total) total += seconds;
  return total;
}

// The series of `s` with a figure measured at or after `since` (Unix seconds).
std::set<SeriesKey> FreshSeries(const Snapshot& s, bool per_cpu, double since) {
  std::set<SeriesKey> fresh;
  for (const Timed& t : s.figures) {
    const ProbeKind& kind = t.record->kind();
    if (kind.traits().has_baseline && t.unix_seconds >= since) fresh.insert(kind.SeriesOf(t.record->target(), per_cpu));
  }
  return fresh;
}

bool Covers(const std::vector<BaselineValue>& values, const std::set<SeriesKey>& keys) {
  std::set<SeriesKey> have;
  for (const BaselineValue& v : values) have.insert(v);
  return std::includes(have.begin(), have.end(), keys.begin(), keys.end());
}

}  // namespace

std::string PreviewDuration(double seconds) {
  if (seconds <= 0) return "not within the horizon";
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

k::Expected<SchedulePreview> PreviewSchedule(const Config& given, SimulatedHost::TopologySource topology,
                                             const k::Restriction& restriction, const TaskCostEstimate& costs,
                                             double horizon_seconds) {
  Config config = given;
  config.probe_lock_file = "";  // a simulation measures nothing
  // The simulated daemon logs as a real one would ("baseline armed at 1"),
  // which is not the preview's to say: quiet while it runs.
  struct QuietLogs {
    spdlog::level::level_enum was = spdlog::get_level();
    QuietLogs() { spdlog::set_level(spdlog::level::off); }
    ~QuietLogs() { spdlog::set_level(was); }
  } quiet;

  // What the plan holds: its representatives and baseline series.
  auto host = topology(restriction);
  if (!host.ok()) return host.failure();
  auto plan = BuildPlan(config.targets, host.value());
  if (!plan.ok()) return plan.failure();
  const Rotation rotation = SplitRound(RoundTasks(plan.value(), config, host.value()), host.value());
  if (!costs.Knows(rotation.tasks)) {
    return k::Failure{k::Outcome::kInvalidSpec, "the task costs do not name every enabled probe kind"};
  }
  SchedulePreview preview;
  preview.tasks = static_cast<int>(rotation.tasks.size());
  preview.representatives = static_cast<int>(rotation.every_round.size());
  std::set<SeriesKey> all, representatives;
  for (std::size_t i = 0; i < rotation.tasks.size(); ++i) {
    const Task& task = rotation.tasks[i];
    if (!task.kind->traits().has_baseline) continue;
    const SeriesKey key = task.kind->SeriesOf(task.target, config.targets.per_cpu);
    all.insert(key);
    if (std::find(rotation.every_round.begin(), rotation.every_round.end(), i) != rotation.every_round.end()) {
      representatives.insert(key);
    }
  }
  preview.series = static_cast<int>(all.size());
  const std::size_t host_cpus = host->cpus().size() + host->disallowed_cpus().size();
  preview.learning_budget_ratio = LearningDutyCycle(config, host_cpus);
  preview.budget_ratio = config.schedule.duty_cycle;
  const auto horizon = static_cast<std::int64_t>(horizon_seconds * kSimulatedSecond);

  // A first start, until every series is armed.
  auto files = std::make_shared<std::map<std::string, std::string>>();
  auto first = Life::Start(config, topology, restriction, costs, files, 0);
  if (!first.ok()) return first.failure();
  Life& life = *first.value();
  double cpu_an_hour_ago = 0;
  std::int64_t armed_at = -1;
  std::int64_t t = 0;
  const auto step = [&]() -> bool {
    t += kStep;
    if (!life.host->RunUntil(t)) return false;
    if (t % (3600 * kSimulatedSecond) == 0) {
      const double cpu = TotalCpu(life.Now());
      preview.cpu_seconds_per_hour = std::max(preview.cpu_seconds_per_hour, cpu - cpu_an_hour_ago);
      cpu_an_hour_ago = cpu;
    }
    return true;
  };
  while (armed_at < 0 && t < horizon) {
    if (!step()) return k::Failure{k::Outcome::kTimeout, "the simulated loop stopped answering"};
    const Snapshot s = life.Now();
    const double seconds = static_cast<double>(t) / kSimulatedSecond;
    if (preview.ready_seconds == 0 && s.ready()) preview.ready_seconds = seconds;
    if (preview.armed_representatives_seconds == 0 && Covers(s.baseline, representatives)) {
      preview.armed_representatives_seconds = seconds;
    }
    if (Covers(s.baseline, all)) {
      armed_at = t;
      preview.armed_every_pair_seconds = seconds;
    }
  }
  // Then the settled schedule, watched for two of its cycles: how often each
  // series really gets a figure, and what that costs.
  if (armed_at >= 0) {
    const std::int64_t settle = t + 3600 * kSimulatedSecond;
    while (t < settle && step()) {
    }
    const std::int64_t from = t;
    const double cpu_from = TotalCpu(life.Now());
    const std::uint64_t rounds_from = life.Now().rounds_completed;
    std::map<SeriesKey, double> last;
    std::map<SeriesKey, std::vector<double>> gaps;
    std::int64_t window = 4 * 3600 * kSimulatedSecond;
    while (t - from < window && t < from + horizon) {
      if (!step()) return k::Failure{k::Outcome::kTimeout, "the simulated loop stopped answering"};
      const Snapshot s = life.Now();
      // Two cycles of the refresh interval the daemon exports, at least 4 h.
      window = std::max(window, static_cast<std::int64_t>(2 * s.refresh_interval_seconds * kSimulatedSecond));
      for (const Timed& timed : s.figures) {
        const ProbeKind& kind = timed.record->kind();
        if (!kind.traits().has_baseline) continue;
        const SeriesKey key = kind.SeriesOf(timed.record->target(), config.targets.per_cpu);
        const auto [it, inserted] = last.try_emplace(key, timed.unix_seconds);
        if (!inserted && timed.unix_seconds > it->second) {
          gaps[key].push_back(timed.unix_seconds - it->second);
          it->second = timed.unix_seconds;
        }
      }
    }
    const Snapshot s = life.Now();
    const double hours = static_cast<double>(t - from) / kSimulatedSecond / 3600;
    preview.steady_cpu_seconds_per_hour = (TotalCpu(s) - cpu_from) / hours;
    preview.rotation_rounds = s.rotation_rounds;
    preview.round_seconds = static_cast<double>(t - from) / kSimulatedSecond /
                            static_cast<double>(std::max<std::uint64_t>(s.rounds_completed - rounds_from, 1));
    // A series' refresh interval: the median of its gaps; the representatives'
    // is their median, every pair's the longest of any series.
    std::vector<double> reps;
    for (const auto& [key, list] : gaps) {
      const double median = *k::Median(list);  // a series in `gaps` has at least one gap
      if (representatives.contains(key)) reps.push_back(median);
      preview.every_pair_refresh_seconds = std::max(preview.every_pair_refresh_seconds, median);
    }
    if (const auto median = k::Median(reps)) preview.representatives_refresh_seconds = *median;
    preview.cycle_cpu_seconds = preview.steady_cpu_seconds_per_hour * preview.every_pair_refresh_seconds / 3600;
  }
  const std::int64_t stopped_at = life.host->MonotonicNs();
  first.value().reset();  // stops the loop; the state is saved on the way out
  preview.complete = armed_at >= 0 && preview.steady_cpu_seconds_per_hour > 0 && preview.every_pair_refresh_seconds > 0;

  // A restart: ready again, and every series measured again.
  if (preview.complete) {
    auto second = Life::Start(config, topology, restriction, costs, files, stopped_at);
    if (!second.ok()) return second.failure();
    Life& again = *second.value();
    const double restart_unix = SimulatedHost::kUnixStart + static_cast<double>(stopped_at) / kSimulatedSecond;
    for (std::int64_t at = stopped_at + kStep; at <= stopped_at + horizon; at += kStep) {
      if (!again.host->RunUntil(at)) return k::Failure{k::Outcome::kTimeout, "the simulated loop stopped answering"};
      const Snapshot s = again.Now();
      const double seconds = static_cast<double>(at - stopped_at) / kSimulatedSecond;
      if (preview.ready_after_restart_seconds == 0 && s.ready()) preview.ready_after_restart_seconds = seconds;
      if (preview.rearmed_after_restart_seconds == 0 &&
          FreshSeries(s, config.targets.per_cpu, restart_unix).size() >= all.size()) {
        preview.rearmed_after_restart_seconds = seconds;
      }
      if (preview.ready_after_restart_seconds > 0 && preview.rearmed_after_restart_seconds > 0) break;
    }
    preview.complete = preview.rearmed_after_restart_seconds > 0 && preview.ready_after_restart_seconds > 0;
  }
  preview.assumptions = {
      "every probe succeeds and costs what the task costs say (a visit's first task with its buffer preparation)",
      "durations are the schedule's: probes that cost more (remote pairs on real hardware) take proportionally longer",
      fmt::format("the learning budget ({:.3g}% of one CPU) applies while a series records its baseline, then "
                  "schedule.duty_cycle ({:.3g}%)",
                  preview.learning_budget_ratio * 100, preview.budget_ratio * 100),
      fmt::format("the restart comes once every series is armed; the state file carries what was learnt"),
  };
  return preview;
}

}  // namespace numaprobe::daemon
