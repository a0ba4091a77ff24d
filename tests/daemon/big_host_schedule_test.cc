// SPDX-License-Identifier: Apache-2.0
// The schedule's goals on big hosts, proven by the real scheduler loop and
// results model on a simulated clock (daemon/serve/simulation.h), on the
// 8- and 16-node topologies of QEMU guests (tests/fixtures/topology/, 64 CPUs
// each) with the task costs measured on this project's host
// (tests/fixtures/task_costs/measured.json), at the default configuration:
//  - /-/ready and a first figure of every representative (one pair per probe
//    kind and node distance) within 15 min of any start, first or restart;
//  - every representative's drift alerts armed within 4 h of the first start,
//    every pair's within 12 h (8 nodes) and 24 h (16 nodes);
//  - after a restart whatever was armed is armed at once and a recording goes
//    on from where it was;
//  - the probe CPU of any hour at most 1% of one CPU and 0.01% of the host's.
// With restarts in the first round, mid-recording and after arming, a probe
// that fails for hours, a series added to the plan and a cpuset change.
// Structure and the schedule's own arithmetic only: nothing is measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/rotation.h"
#include "daemon/serve/scheduler.h"
#include "daemon/serve/simulation.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

constexpr std::int64_t kS = kSimulatedSecond;
constexpr std::int64_t kMinute = 60 * kS;
constexpr std::int64_t kHour = 3600 * kS;

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TaskCostEstimate MeasuredCosts() {
  TaskCostEstimate costs;
  const std::string error =
      TaskCostEstimate::Parse(Slurp(std::filesystem::path(NUMAPROBE_FIXTURES) / "task_costs" / "measured.json"),
                              "measured.json", costs);
  EXPECT_EQ(error, "");
  return costs;
}

// The default configuration, its state in the simulation's memory.
Config DefaultConfig() {
  Config config;
  config.probe_lock_file = "";
  return config;
}

// What a plan holds: its baseline series, the representatives among them,
// and how many CPUs the host has.
struct PlannedSeries {
  std::set<SeriesKey> all;
  std::set<SeriesKey> representatives;
  std::size_t host_cpus = 0;
};

PlannedSeries PlanOf(const Config& config, const k::Topology& topology) {
  auto plan = BuildPlan(config.targets, topology);
  EXPECT_TRUE(plan.ok());
  const Rotation rotation = SplitRound(RoundTasks(plan.value(), config, topology), topology);
  PlannedSeries planned;
  planned.host_cpus = topology.cpus().size() + topology.disallowed_cpus().size();
  for (std::size_t i = 0; i < rotation.tasks.size(); ++i) {
    const Task& task = rotation.tasks[i];
    if (!task.kind->traits().has_baseline) continue;
    const SeriesKey key = task.kind->SeriesOf(task.target, config.targets.per_cpu);
    planned.all.insert(key);
    if (std::find(rotation.every_round.begin(), rotation.every_round.end(), i) != rotation.every_round.end()) {
      planned.representatives.insert(key);
    }
  }
  return planned;
}

std::set<SeriesKey> KeysOf(const std::vector<BaselineValue>& values) {
  std::set<SeriesKey> keys;
  for (const BaselineValue& v : values) keys.insert(v);
  return keys;
}

bool Includes(const std::set<SeriesKey>& have, const std::set<SeriesKey>& want) {
  return std::includes(have.begin(), have.end(), want.begin(), want.end());
}

// The series with a figure measured at or after `since` (Unix seconds).
std::set<SeriesKey> Figured(const Snapshot& s, double since) {
  std::set<SeriesKey> keys;
  for (const Timed& t : s.figures) {
    const ProbeKind& kind = t.record->kind();
    if (kind.traits().has_baseline && t.unix_seconds >= since) keys.insert(kind.SeriesOf(t.record->target(), false));
  }
  return keys;
}

double TotalCpu(const Snapshot& s) {
  double total = 0;
  for (const auto& [probe, seconds] : s.cpu_seconds_total) total += seconds;
  return total;
}

double UnixAt(std::int64_t ns) { return SimulatedHost::kUnixStart + static_cast<double>(ns) / kS; }

// One big host through its lives: the topology from a QEMU guest, its state
// files kept across restarts, the simulated clock going on.
class BigHost {
 public:
  BigHost(const std::string& fixture, Config config, SimulatedExecutor::ScriptFn script = {})
      : xml_(Slurp(std::filesystem::path(NUMAPROBE_FIXTURES) / "topology" / fixture)),
        config_(std::move(config)),
        script_(std::move(script)) {
    auto topology = k::Topology::FromXml(xml_, {});
    EXPECT_TRUE(topology.ok()) << topology.failure().reason;
    planned_ = PlanOf(config_, topology.value());
  }
  ~BigHost() { Stop(); }

  const PlannedSeries& planned() const { return planned_; }
  std::int64_t now() const { return sim_ ? sim_->MonotonicNs() : stopped_at_; }

  // A start at the time the last life stopped (0 the first time).
  void Start() {
    store_ = std::make_unique<ResultStore>();
    const std::string xml = xml_;
    auto host = std::make_unique<SimulatedHost>([xml](const k::Restriction& r) { return k::Topology::FromXml(xml, r); },
                                                restriction_, TestHooks{}, files_, stopped_at_);
    host->fact_roots = FixtureFacts();
    sim_ = host.get();
    auto executor = std::make_unique<SimulatedExecutor>(*host, MeasuredCosts(), script_);
    auto created = Scheduler::Create(config_, *store_, std::move(host), std::move(executor));
    ASSERT_TRUE(created.ok()) << created.failure().reason;
    scheduler_ = std::move(created).value();
    // What the restore published, read before the loop's thread starts: its
    // first runs need no wait (the budget is fresh), so a read after Start
    // could already hold them.
    at_start_ = Now();
    started_at_ = stopped_at_;
    cpu_hour_start_ = 0;
    hour_start_ = started_at_;
    ASSERT_EQ(scheduler_->Start(), "");
  }

  void Stop() {
    if (!scheduler_) return;
    stopped_at_ = sim_->MonotonicNs();
    EXPECT_TRUE(scheduler_->Stop());
    scheduler_.reset();
    sim_ = nullptr;
  }

  void Restart() {
    Stop();
    Start();
  }

  void Reload(Config config) {
    config_ = std::move(config);
    scheduler_->Reload(config_);
  }
  void SetRestriction(k::Restriction restriction) {
    restriction_ = restriction;
    sim_->SetRestriction(std::move(restriction));
  }

  Snapshot Now() const { return *store_->Current(); }
  // The snapshot of this life's start: what was restored, before any run.
  const Snapshot& AtStart() const { return at_start_; }

  // Runs the loop to `until` a minute at a time; `each` sees every minute's
  // snapshot and returns true to stop early. Checks every hour's probe CPU
  // against the daemon's cap on the way.
  void RunUntil(std::int64_t until, const std::function<bool(const Snapshot&)>& each = {}) {
    for (std::int64_t t = now() + kMinute; t <= until; t += kMinute) {
      ASSERT_TRUE(sim_->RunUntil(t)) << "the loop stopped answering at " << t / kS << " s";
      const Snapshot s = Now();
      if (t - hour_start_ >= kHour) {
        const double cpu = TotalCpu(s);
        const double cap = std::min(0.01, 0.0001 * static_cast<double>(planned_.host_cpus)) * 3600;
        EXPECT_LE(cpu - cpu_hour_start_, cap) << "probe CPU in the hour before " << t / kS << " s";
        max_cpu_hour_ = std::max(max_cpu_hour_, cpu - cpu_hour_start_);
        cpu_hour_start_ = cpu;
        hour_start_ = t;
      }
      if (each && each(s)) return;
    }
  }

  // Runs until `done` holds for the snapshot, at most until `deadline`;
  // returns when it held (simulated ns), or -1.
  std::int64_t RunUntilHolds(std::int64_t deadline, const std::function<bool(const Snapshot&)>& done) {
    std::int64_t held = -1;
    RunUntil(deadline, [&](const Snapshot& s) {
      if (!done(s)) return false;
      held = now();
      return true;
    });
    return held;
  }

  // The first start's or a restart's readiness: ready, and every
  // representative measured since this life began.
  std::int64_t RunUntilReady() {
    const double since = UnixAt(started_at_);
    return RunUntilHolds(started_at_ + kHour, [&](const Snapshot& s) {
      return s.ready() && Includes(Figured(s, since), planned_.representatives);
    });
  }

  double max_cpu_hour() const { return max_cpu_hour_; }
  std::int64_t started_at() const { return started_at_; }

 private:
  // Host facts from a fixture tree: the test reads nothing of this machine.
  static FactRoots FixtureFacts() {
    const std::string root = std::string(NUMAPROBE_FIXTURES) + "/host_facts/thp/before";
    return {root + "/proc", root + "/sys"};
  }

  std::string xml_;
  Config config_;
  SimulatedExecutor::ScriptFn script_;
  PlannedSeries planned_;
  k::Restriction restriction_;  // everything allowed
  std::shared_ptr<std::map<std::string, std::string>> files_ = std::make_shared<std::map<std::string, std::string>>();
  std::unique_ptr<ResultStore> store_;
  SimulatedHost* sim_ = nullptr;
  std::unique_ptr<Scheduler> scheduler_;
  Snapshot at_start_;
  std::int64_t stopped_at_ = 0;
  std::int64_t started_at_ = 0;
  std::int64_t hour_start_ = 0;
  double cpu_hour_start_ = 0;
  double max_cpu_hour_ = 0;
};

// Every goal on one topology, with restarts in the first round, while
// recording and after arming.
void MeetsEveryGoal(const std::string& fixture, std::int64_t every_pair_deadline) {
  BigHost host(fixture, DefaultConfig());
  const PlannedSeries& planned = host.planned();
  ASSERT_GT(planned.representatives.size(), 3u);
  host.Start();

  // A restart in the first round: ready again within 15 min of it.
  host.RunUntil(2 * kMinute);
  host.Restart();
  const std::int64_t ready = host.RunUntilReady();
  ASSERT_GE(ready, 0) << "never ready after the restart in the first round";
  EXPECT_LE(ready - host.started_at(), 15 * kMinute);

  // A restart while recording: what was recorded goes on from where it was.
  host.RunUntil(90 * kMinute);
  const Snapshot before = host.Now();
  ASSERT_GT(before.baseline_progress.recording, 0);
  ASSERT_GT(before.baseline_progress.recorded_ratio, 0);
  host.Restart();
  const Snapshot& restored = host.AtStart();
  EXPECT_EQ(restored.baseline_progress.armed, before.baseline_progress.armed) << "armed again at once";
  EXPECT_EQ(restored.baseline_progress.recording, before.baseline_progress.recording);
  // The recording goes on from where it was: nothing lost, nothing started
  // over. The loop was parked when `before` was read, and a stop lands nothing.
  EXPECT_EQ(restored.baseline_progress.recorded_ratio, before.baseline_progress.recorded_ratio)
      << "figures recorded before the restart lost or gained";
  EXPECT_EQ(KeysOf(restored.recent_medians), KeysOf(before.recent_medians)) << "recent figures kept";
  const std::int64_t ready_again = host.RunUntilReady();
  ASSERT_GE(ready_again, 0);
  EXPECT_LE(ready_again - host.started_at(), 15 * kMinute) << "ready after the restart while recording";

  // Armed: the representatives within 4 h of the first start, every pair by its deadline.
  const std::int64_t representatives_armed = host.RunUntilHolds(4 * kHour, [&](const Snapshot& s) {
    return Includes(KeysOf(s.baseline), planned.representatives);
  });
  EXPECT_GE(representatives_armed, 0) << "representatives not armed within 4 h of the first start";
  const std::int64_t all_armed = host.RunUntilHolds(every_pair_deadline, [&](const Snapshot& s) {
    return Includes(KeysOf(s.baseline), planned.all);
  });
  ASSERT_GE(all_armed, 0) << "not every pair armed within " << every_pair_deadline / kHour << " h of the first start";
  EXPECT_TRUE(host.Now().baseline_complete);
  EXPECT_EQ(host.Now().baseline_progress.recording, 0);

  // A restart after arming: armed at once (before any run), ready within 15 min.
  host.RunUntil(all_armed + 30 * kMinute);
  const auto drift_before = host.Now().worst_drift.size();
  host.Restart();
  EXPECT_TRUE(host.AtStart().baseline_complete) << "armed again before any figure";
  EXPECT_EQ(KeysOf(host.AtStart().baseline), planned.all);
  EXPECT_EQ(host.AtStart().worst_drift.size(), drift_before) << "drift is checked from the restored figures at once";
  const std::int64_t ready_armed = host.RunUntilReady();
  ASSERT_GE(ready_armed, 0);
  EXPECT_LE(ready_armed - host.started_at(), 15 * kMinute) << "ready after the restart once armed";
  host.RunUntil(host.now() + 2 * kHour);  // an hour and more of the settled budget, its CPU checked
  EXPECT_GT(host.max_cpu_hour(), 0);
}

TEST(BigHostSchedule, EightNodesMeetEveryGoalThroughRestarts) { MeetsEveryGoal("8node_2s_snc4.xml", 12 * kHour); }

TEST(BigHostSchedule, SixteenNodesMeetEveryGoalThroughRestarts) { MeetsEveryGoal("16node_4s_snc4.xml", 24 * kHour); }

// A series whose runs fail for hours costs only its own figures: every other
// series arms on time, and it arms once its runs succeed again.
TEST(BigHostSchedule, AFailingSeriesCostsOnlyItsOwnFigures) {
  const SeriesKey failing{"latency", -1, 2, 5, ""};
  std::atomic<std::int64_t> clock{0};  // the loop's time, as the test last saw it
  BigHost host("8node_2s_snc4.xml", DefaultConfig(), [&](const Task& task, int) {
    SimulatedExecutor::Script script;
    const bool its_run = task.kind == &LatencyProbe() && task.target.pair.cpu_node == failing.cpu_node &&
                         task.target.pair.mem_node == failing.mem_node;
    if (its_run && clock.load() < 8 * kHour) script.outcome = k::Outcome::kTimeout;
    return script;
  });
  host.Start();
  std::set<SeriesKey> others = host.planned().all;
  others.erase(failing);
  const std::int64_t others_armed = host.RunUntilHolds(12 * kHour, [&](const Snapshot& s) {
    clock = host.now();
    return Includes(KeysOf(s.baseline), others);
  });
  ASSERT_GE(others_armed, 0) << "a failing series kept the others from arming";
  EXPECT_FALSE(KeysOf(host.Now().baseline).contains(failing));
  const std::int64_t armed = host.RunUntilHolds(24 * kHour, [&](const Snapshot& s) {
    clock = host.now();
    return KeysOf(s.baseline).contains(failing);
  });
  EXPECT_GE(armed, 8 * kHour) << "it arms from successful runs only";
  EXPECT_GE(host.Now().runs_total.at({"latency", "timeout"}), 1u);
}

// A series that joins the plan later (an op added) records a baseline of its
// own; the others stay armed, and its arrival is a host change.
TEST(BigHostSchedule, ASeriesAddedLaterRecordsItsOwnBaseline) {
  Config config = DefaultConfig();
  config.probes.Of<BandwidthConfig>().ops = {k::BandwidthOp::kRead, k::BandwidthOp::kWrite};
  BigHost host("8node_2s_snc4.xml", config);
  host.Start();
  const std::set<SeriesKey> before = host.planned().all;
  ASSERT_GE(host.RunUntilHolds(12 * kHour, [&](const Snapshot& s) { return Includes(KeysOf(s.baseline), before); }), 0);
  const std::int64_t added_at = host.now();
  Config more = config;
  more.probes.Of<BandwidthConfig>().ops.push_back(k::BandwidthOp::kCopy);
  host.Reload(more);
  host.RunUntil(added_at + 10 * kMinute);
  const Snapshot after = host.Now();
  EXPECT_TRUE(Includes(KeysOf(after.baseline), before)) << "the old series stay armed";
  EXPECT_EQ(after.baseline_progress.recording, 64) << "the copy series of 64 pairs record";
  EXPECT_EQ(after.baseline_origin, "first_start") << "no reset";
  const auto change = std::find_if(after.host_changes.begin(), after.host_changes.end(),
                                   [](const HostChange& c) { return c.field == "planned_series"; });
  ASSERT_NE(change, after.host_changes.end());
  EXPECT_EQ(change->before, std::to_string(before.size()));
  EXPECT_EQ(change->after, std::to_string(before.size() + 64));
  EXPECT_GE(host.RunUntilHolds(added_at + 12 * kHour, [](const Snapshot& s) { return s.baseline_complete; }), 0)
      << "the added series arm within 12 h of joining";
}

// A cpuset change (the Kubernetes static CPU manager moving a pod's CPUs):
// the series still planned keep their recent figures; the series that left
// and come back keep their baselines.
TEST(BigHostSchedule, ACpusetChangeKeepsWhatIsStillPlanned) {
  BigHost host("8node_2s_snc4.xml", DefaultConfig());
  host.Start();
  ASSERT_GE(host.RunUntilHolds(12 * kHour, [](const Snapshot& s) { return s.baseline_complete; }), 0);
  host.RunUntil(host.now() + kHour);
  const Snapshot before = host.Now();
  // Node 7's CPUs (56-63) leave the cpuset.
  std::set<int> cpus;
  for (int cpu = 0; cpu < 56; ++cpu) cpus.insert(cpu);
  host.SetRestriction({cpus, std::nullopt});
  host.RunUntil(host.now() + kMinute);
  const Snapshot shrunk = host.Now();
  std::set<SeriesKey> stayed;
  for (const BaselineValue& v : before.recent_medians) {
    if (v.cpu_node != 7) stayed.insert(v);
  }
  ASSERT_FALSE(stayed.empty());
  EXPECT_TRUE(Includes(KeysOf(shrunk.recent_medians), stayed)) << "recent figures of what stays planned kept";
  for (const BaselineValue& v : shrunk.baseline) EXPECT_NE(v.cpu_node, 7) << "left the plan";
  host.SetRestriction({});
  host.RunUntil(host.now() + kMinute);
  EXPECT_EQ(KeysOf(host.Now().baseline), host.planned().all) << "node 7's series come back armed";
}

}  // namespace
}  // namespace numaprobe::daemon
