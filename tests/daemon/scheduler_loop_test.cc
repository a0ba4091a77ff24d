// SPDX-License-Identifier: Apache-2.0
// The scheduler loop (scheduler.cc) on a scripted host and scripted probes
// (scripted_loop.h): pacing, jitter, the duty-cycle budget, rotation,
// baseline rounds and the state file, a reload and a cpuset change in the
// middle of a round, stop while a probe runs, the systemd watchdog, and the
// confirmation runs of a figure beyond its band.
// The loop runs on its own thread as in the daemon; its clock moves only when
// it sleeps or a probe runs, so hours of schedule take milliseconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/results/state_file.h"
#include "daemon/serve/scheduler.h"
#include "daemon/serve/state.h"
#include "tests/daemon/log_capture.h"
#include "tests/daemon/scripted_loop.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace numaprobe::daemon {
namespace {

using namespace scripted;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::int64_t kStart = 1000 * kSecond;  // the scripted clock's start

std::string FreshDirectory(const std::string& name) {
  const std::string dir = testing::TempDir() + "scheduler_loop_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

// Latency and bandwidth (read, write, copy) on every pair of two nodes: 4 + 12
// runs a round, in 2 + 4 visits (SharesBuffers).
Config TwoKindConfig(const std::string& name) {
  Config config;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  config.schedule.duty_cycle = 0.01;
  config.schedule.interval = seconds(10);
  config.schedule.jitter = 0.1;
  config.baseline.rounds = 2;
  config.state_directory = FreshDirectory(name);
  config.probe_lock_file = "";  // no host-wide lock
  return config;
}

// The real loop on a scripted host; stopped at the end of the test.
struct Rig {
  ResultStore store;
  SimulatedHost* host;
  ScriptedExecutor* probes;
  std::unique_ptr<Scheduler> scheduler;

  Rig(Config config, ScriptedExecutor::ScriptFn script, std::optional<milliseconds> watchdog = {},
      std::unique_ptr<SimulatedHost> owned_host = ScriptedHost()) {
    owned_host->watchdog = watchdog;
    auto owned_probes = std::make_unique<ScriptedExecutor>(*owned_host, std::move(script));
    host = owned_host.get();
    probes = owned_probes.get();
    auto created = Scheduler::Create(std::move(config), store, std::move(owned_host), std::move(owned_probes));
    EXPECT_TRUE(created.ok()) << created.failure().reason;
    scheduler = std::move(created).value();
    scheduler->Start();
  }
  ~Rig() {
    if (scheduler) {
      EXPECT_TRUE(scheduler->Stop());
    }
  }
  Snapshot Now() const { return *store.Current(); }
};

Script Ok(double cpu_seconds) {
  Script s;
  s.cpu_seconds = cpu_seconds;
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Task TaskOf(const Started& run) { return Task{run.kind, run.target, run.attempt, run.confirmation}; }

// Every visit (the first run after one that does not share its buffers) starts
// no earlier than the budget allows after the previous run: its end plus its
// cost / duty cycle. A visit's runs follow each other without a pause.
TEST(SchedulerLoop, PacesEveryVisitByTheCostOfTheOneBefore) {
  const double ratio = 0.01, cost = 0.05;
  Config config = TwoKindConfig("pacing");
  config.schedule.duty_cycle = ratio;
  config.schedule.interval = seconds(1);
  Rig rig(config, [&](const Task&, int) { return Ok(cost); });
  ASSERT_TRUE(rig.host->RunUntil(kStart + 600 * kSecond));
  const auto runs = rig.probes->Runs();
  ASSERT_GT(runs.size(), 32u) << "two rounds at least";
  const auto pause_ns = static_cast<std::int64_t>(cost / ratio * kSecond);
  int visits = 0;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].end_ns < 0) break;  // still running when the test parked the loop
    if (SharesBuffers(TaskOf(runs[i - 1]), TaskOf(runs[i]))) {
      EXPECT_EQ(runs[i].start_ns, runs[i - 1].end_ns) << "run " << i << " continues a visit";
    } else {
      ++visits;
      EXPECT_GE(runs[i].start_ns, runs[i - 1].end_ns + pause_ns) << "run " << i;
    }
  }
  EXPECT_GT(visits, 10);
}

// When the rounds of a loop like StartsRoundsAtJitteredIntervals's started
// over 3000 s, on a scripted host of jitter seed `seed`.
std::vector<std::int64_t> JitteredRoundStarts(std::uint64_t seed, Snapshot* last = nullptr) {
  Config config = TwoKindConfig("jitter");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.schedule.jitter = 0.2;
  auto host = ScriptedHost();
  host->jitter_seed = seed;
  Rig rig(
      config, [](const Task&, int) { return Ok(0.001); }, {}, std::move(host));
  EXPECT_TRUE(rig.host->RunUntil(kStart + 3000 * kSecond));
  const auto runs = rig.probes->Runs();
  std::vector<std::int64_t> round_starts;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // Within a round runs follow each other within milliseconds.
    if (i == 0 || runs[i].start_ns - runs[i - 1].start_ns > 10 * kSecond) round_starts.push_back(runs[i].start_ns);
  }
  if (last != nullptr) *last = rig.Now();
  return round_starts;
}

// Rounds start `interval` x U(1 - jitter, 1 + jitter) apart: never in
// lockstep with other hosts, never outside the bounds. The scripted host's
// fixed seed makes the spread the same on every run.
TEST(SchedulerLoop, StartsRoundsAtJitteredIntervals) {
  Snapshot last;
  const std::vector<std::int64_t> round_starts = JitteredRoundStarts(kJitterSeed, &last);
  ASSERT_GE(round_starts.size(), 20u);
  std::set<std::int64_t> gaps;
  for (std::size_t i = 1; i < round_starts.size(); ++i) {
    const std::int64_t gap = round_starts[i] - round_starts[i - 1];
    EXPECT_GE(gap, 80 * kSecond);
    EXPECT_LE(gap, 120 * kSecond);
    gaps.insert(gap);
  }
  EXPECT_GT(*gaps.rbegin() - *gaps.begin(), 10 * kSecond) << "the jitter spreads round starts";
  EXPECT_EQ(last.rounds_completed, round_starts.size()) << "parked waiting for the next round";
}

// The jitter comes from the environment's seed alone: the same seed gives
// the same round starts, another seed others.
TEST(SchedulerLoop, JitterFollowsTheEnvironmentsSeed) {
  const std::vector<std::int64_t> first = JitteredRoundStarts(7);
  ASSERT_GE(first.size(), 20u);
  EXPECT_EQ(JitteredRoundStarts(7), first);
  EXPECT_NE(JitteredRoundStarts(8), first);
}

// Over every 10-minute window, the probes' CPU is at most duty_cycle x window
// plus one visit (budget.h's bound, with the pause taken after each visit as
// a whole: round_tasks.h), and the budget is used: with a 1 s interval it,
// not the interval, paces the probes.
TEST(SchedulerLoop, KeepsEveryWindowWithinTheBudget) {
  const double ratio = 0.02;
  Config config = TwoKindConfig("budget");
  config.schedule.duty_cycle = ratio;
  config.schedule.interval = seconds(1);
  // Uneven costs: visits that prepare buffers cost more than runs continuing them.
  Rig rig(config,
          [](const Task& task, int index) { return Ok(task.kind == &LatencyProbe() ? 0.3 : 0.01 * (index % 7)); });
  const std::int64_t end = kStart + 3 * 3600 * kSecond;
  ASSERT_TRUE(rig.host->RunUntil(end));
  const auto runs = rig.probes->Runs();
  double largest = 0, total = 0, visit = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0 && !SharesBuffers(TaskOf(runs[i - 1]), TaskOf(runs[i]))) visit = 0;
    visit += runs[i].cpu_seconds;
    largest = std::max(largest, visit);
    total += runs[i].cpu_seconds;
  }
  const std::int64_t window = 600 * kSecond;
  for (const auto& from : runs) {
    double spent = 0;
    for (const auto& r : runs) {
      const std::int64_t r_end = r.end_ns < 0 ? end : r.end_ns;
      if (r_end >= from.start_ns && r.start_ns <= from.start_ns + window) spent += r.cpu_seconds;
    }
    ASSERT_LE(spent, ratio * 600 + largest + 1e-9) << "window from " << from.start_ns;
  }
  const double used = total / (static_cast<double>(end - kStart) / kSecond);
  EXPECT_GT(used, 0.9 * ratio) << "the budget paces the probes; it is not left idle";
  EXPECT_LE(rig.Now().duty_cycle_ratio, ratio + largest / 600);
}

// The pacing exactly, with work always pending (a 1 s interval) and fixed
// costs per kind and op: every visit starts its cost / duty cycle after the
// one before (the pause is counted from a run's end, and these runs take no
// time on the loop's clock, so the visits' starts are the pauses alone). So
// every 10-minute window holds duty_cycle x 600 s of probe CPU within one
// visit either way: at most that plus the visit that starts last in it (its
// pause falls after the window), at least that less the visit whose pause
// was under way when it opened. The daemon's own trailing ratio says the same.
// (The real process's CPU against its budget is bench/budget_cpu.py's: there
// what a run costs is the machine's.)
TEST(SchedulerLoop, PausesEachVisitByItsCostAndSpendsTheBudgetInEveryWindow) {
  const double ratio = 0.01;
  Config config = TwoKindConfig("exact_pacing");
  config.schedule.duty_cycle = ratio;
  config.schedule.interval = seconds(1);
  const auto cost_of = [](const Task& task) {
    if (task.kind == &LatencyProbe()) return 0.05;
    return task.target.variant == "read" ? 0.02 : task.target.variant == "write" ? 0.03 : 0.04;
  };
  Rig rig(config, [&](const Task& task, int) {
    Script s = Ok(cost_of(task));
    s.seconds = 0;
    return s;
  });
  const std::int64_t end = kStart + 3 * 3600 * kSecond;
  ASSERT_TRUE(rig.host->RunUntil(end));
  const auto runs = rig.probes->Runs();
  // The visits: when each started and what its runs cost together.
  std::vector<std::pair<std::int64_t, double>> visits;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].end_ns, runs[i].start_ns) << "run " << i << " takes no time";
    ASSERT_DOUBLE_EQ(runs[i].cpu_seconds, cost_of(TaskOf(runs[i]))) << "run " << i;
    if (i > 0 && SharesBuffers(TaskOf(runs[i - 1]), TaskOf(runs[i]))) {
      visits.back().second += runs[i].cpu_seconds;
    } else {
      visits.emplace_back(runs[i].start_ns, runs[i].cpu_seconds);
    }
  }
  // 3 h at 1% is 108 CPU-s, in visits of 0.1 CPU-s (a memory node's two
  // latency runs) and 0.18 (its six bandwidth runs).
  ASSERT_GT(visits.size(), 700u);
  double largest = 0;
  for (std::size_t v = 1; v < visits.size(); ++v) {
    const double pause_s = static_cast<double>(visits[v].first - visits[v - 1].first) / kSecond;
    // The budget truncates each run's pause to whole nanoseconds.
    ASSERT_NEAR(pause_s, visits[v - 1].second / ratio, 1e-8) << "visit " << v;
    largest = std::max(largest, visits[v - 1].second);
  }
  // Windows [t, t + 600 s] with every run in them counted in full, at each
  // visit's start (the most a window can hold) and just after it (the least);
  // the floor only for windows that end before the simulation does.
  const std::int64_t window = 600 * kSecond;
  // Each run's pause truncated to whole nanoseconds moves a visit by at most
  // a few nanoseconds: a few 1e-9 CPU-s at this budget.
  constexpr double kSlack = 1e-6;
  int floors = 0;
  for (const auto& visit : visits) {
    for (const std::int64_t from : {visit.first, visit.first + 1}) {
      double spent = 0;
      for (const auto& [start, cpu] : visits) spent += start >= from && start <= from + window ? cpu : 0;
      ASSERT_LE(spent, ratio * 600 + largest + kSlack) << "window from " << from;
      if (from + window <= visits.back().first) {
        ASSERT_GE(spent, ratio * 600 - largest - kSlack) << "window from " << from;
        ++floors;
      }
    }
  }
  EXPECT_GT(floors, 1000);
  const double published = rig.Now().duty_cycle_ratio;
  EXPECT_GE(published, ratio - largest / 600);
  EXPECT_LE(published, ratio + largest / 600);
}

// While a planned series records its baseline the loop paces by the learning
// budget and publishes it; a reload (here only the interval changes) replans
// while they record, and the published budget stays the one in use until
// every series has armed (a replan used to publish schedule.duty_cycle while
// the loop went on at the learning budget, which it did not publish again).
TEST(SchedulerLoop, PublishesTheBudgetInUseAcrossAReloadWhileSeriesRecord) {
  Config config = TwoKindConfig("learning_budget");
  config.schedule.duty_cycle = 0.01;
  config.schedule.learning_duty_cycle = 0.05;
  config.schedule.interval = seconds(30);
  config.baseline.rounds = 3;
  Rig rig(config, [](const Task&, int) { return Ok(0.01); });
  ASSERT_TRUE(rig.host->RunUntil(kStart + 45 * kSecond));
  ASSERT_FALSE(rig.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.05);

  Config next = config;
  next.schedule.interval = seconds(31);
  rig.scheduler->Reload(next);
  ASSERT_TRUE(rig.host->RunUntil(kStart + 90 * kSecond));
  ASSERT_EQ(rig.host->plans.load(), 2) << "the reload replanned";
  const std::size_t runs = rig.probes->Runs().size();
  ASSERT_FALSE(rig.Now().baseline_complete) << "the series still record";
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.05) << "the learning budget the loop paces by";

  ASSERT_TRUE(rig.host->RunUntil(kStart + 3600 * kSecond));
  ASSERT_GT(rig.probes->Runs().size(), runs);
  ASSERT_TRUE(rig.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.01) << "every series armed: schedule.duty_cycle";
}

// The budget is the process's: the first run pays for the start (what the
// process spent before the loop's first probe) and every run for what the
// loop spent since the one before; a probe kind's CPU counter has only its
// runs. Here the start cost 0.3 CPU-s and each run 0.01.
TEST(SchedulerLoop, ChargesTheStartAndTheLoopsOwnCpuToTheBudget) {
  const double ratio = 0.01, cost = 0.01, start = 0.3;
  Config config = TwoKindConfig("own_cpu");
  config.schedule.duty_cycle = ratio;
  auto host = ScriptedHost();
  host->own_cpu_seconds = start;
  Rig rig(
      config, [&](const Task&, int) { return Ok(cost); }, {}, std::move(host));
  const auto spent = [&] {
    double runs = 0;
    for (const auto& [kind, cpu] : rig.Now().cpu_seconds_total) runs += cpu;
    return runs;
  };
  ASSERT_TRUE(rig.host->RunUntil(kStart + 20 * kSecond));
  auto runs = rig.probes->Runs();
  std::size_t visit = 1;  // the runs of the first visit
  while (visit < runs.size() && SharesBuffers(TaskOf(runs[visit - 1]), TaskOf(runs[visit]))) ++visit;
  ASSERT_EQ(runs.size(), visit) << "the second visit waits for the start's charge";
  EXPECT_NEAR(spent(), cost * static_cast<double>(visit), 1e-9) << "the kinds count their runs only";
  EXPECT_NEAR(rig.Now().duty_cycle_ratio * 600, start + spent(), 1e-9) << "the start, then the runs";

  // The loop spends 0.2 CPU-s more (a replan, host facts, a state write) while it waits.
  rig.host->own_cpu_seconds = start + 0.2;
  ASSERT_TRUE(rig.host->RunUntil(kStart + 300 * kSecond));
  runs = rig.probes->Runs();
  ASSERT_GT(runs.size(), visit + 8);
  const auto pause_ns = static_cast<std::int64_t>((start + cost * static_cast<double>(visit)) / ratio * kSecond);
  EXPECT_GE(runs[visit].start_ns, runs[0].end_ns + pause_ns) << "the first visit's pause paid for the start";
  // Every charge in the 10-minute window: the start and the 0.2 s once each.
  EXPECT_NEAR(spent(), cost * static_cast<double>(runs.size()), 1e-9);
  EXPECT_NEAR(rig.Now().duty_cycle_ratio * 600, start + 0.2 + spent(), 1e-9);
}

// A full round that costs more than two intervals' budget is split: the
// representatives of each class run every round, the other visits in turn,
// and the refresh interval exported is the cycle's.
TEST(SchedulerLoop, RotatesWhenAFullRoundExceedsTheBudget) {
  Config config = TwoKindConfig("rotation");
  config.schedule.duty_cycle = 0.01;
  config.schedule.interval = seconds(100);                    // 1 CPU-second a round
  Rig rig(config, [](const Task&, int) { return Ok(0.2); });  // a full round: 16 x 0.2 s
  ASSERT_TRUE(rig.host->RunUntil(kStart + 6 * 3600 * kSecond));
  const Snapshot now = rig.Now();
  ASSERT_GT(now.rotation_rounds, 1);
  EXPECT_GE(now.refresh_interval_seconds, now.rotation_rounds * 100.0);
  // After the first (full) round: every target still runs, the representatives more often.
  const auto runs = rig.probes->Runs();
  std::map<std::tuple<std::string, int, int, std::string>, int> count;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto key = std::make_tuple(std::string(runs[i].kind->name()), runs[i].target.pair.cpu_node,
                                     runs[i].target.pair.mem_node, runs[i].target.variant);
    count[key] += i >= 16 ? 1 : 0;
  }
  ASSERT_EQ(count.size(), 16u);
  int least = 1 << 30, most = 0;
  for (const auto& [key, n] : count) {
    least = std::min(least, n);
    most = std::max(most, n);
  }
  EXPECT_GE(least, 1) << "a rotated target never ran again";
  EXPECT_GE(most, least * 2) << "representatives run every round";
}

// The log says what the schedule does as its task costs change: it starts
// rotating when a full round costs more than two intervals' budget, says so
// when the number of rounds changes, and says that rotation stopped when a
// full round fits again; each line is true of the change it reports.
TEST(SchedulerLoop, LogsStartingChangingAndStoppingRotation) {
  LogCapture log;
  Config config = TwoKindConfig("rotation_log");
  config.schedule.interval = seconds(100);  // 1 CPU-second a round at duty_cycle 0.01
  std::atomic<double> cost{0.1};            // a full round on 4 nodes: 64 x 0.1 s > 2 x 1 s
  Rig rig(
      config, [&](const Task&, int) { return Ok(cost.load()); }, {},
      ScriptedHost("pack:4 [numa(memory=1GiB)] core:2 pu:1",
                   k::Restriction{std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}, std::set<int>{0, 1, 2, 3}}));
  ASSERT_TRUE(rig.host->RunUntil(kStart + 6 * 3600 * kSecond));
  const int first = rig.Now().rotation_rounds;
  ASSERT_GT(first, 1);
  cost = 0.3;  // every round's slice now holds fewer visits: more rounds
  ASSERT_TRUE(rig.host->RunUntil(kStart + 24 * 3600 * kSecond));
  const int second = rig.Now().rotation_rounds;
  ASSERT_GT(second, first);
  cost = 0.005;  // a full round: 64 x 0.005 s, well inside one interval's budget
  ASSERT_TRUE(rig.host->RunUntil(kStart + 30 * 3600 * kSecond));
  ASSERT_EQ(rig.Now().rotation_rounds, 1);

  const auto started = log.Lines("starting to rotate");
  ASSERT_EQ(started.size(), 1u) << "rotation started once";
  EXPECT_THAT(started[0], testing::HasSubstr(fmt::format("in rotation over {} rounds", first)));
  EXPECT_THAT(started[0], testing::HasSubstr("more than 2 x budget x interval = 2.00 CPU-s"));
  const auto changed = log.Lines("the number of rounds changed from");
  ASSERT_FALSE(changed.empty());
  EXPECT_THAT(changed.front(), testing::HasSubstr(fmt::format("the number of rounds changed from {}", first)));
  // Each change names the count before it and after it (the estimate may pass
  // through other counts on its way down, each said when it happens).
  int previous = first;
  for (const std::string& line : changed) {
    EXPECT_THAT(line, testing::HasSubstr(fmt::format("the number of rounds changed from {}", previous)));
    const auto at = line.find("in rotation over ");
    ASSERT_NE(at, std::string::npos) << line;
    previous = std::stoi(line.substr(at + 17));
  }
  EXPECT_TRUE(std::any_of(changed.begin(), changed.end(), [&](const std::string& line) {
    return line.find(fmt::format("in rotation over {} rounds", second)) != std::string::npos;
  }));
  const auto stopped = log.Lines("rotation stopped");
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_THAT(stopped[0], testing::HasSubstr("all of them every round"));
  EXPECT_THAT(stopped[0], testing::HasSubstr("at most 2 x budget x interval = 2.00 CPU-s"));
  // Every schedule line is one of the three, and the last says it stopped.
  const auto schedule = log.Lines("schedule: ");
  EXPECT_EQ(schedule.size(), started.size() + changed.size() + stopped.size());
  EXPECT_EQ(schedule.back(), stopped[0]);
}

// Each series arms its baseline from its own `rounds` figures and is then
// published and written to the state file; a failed run costs only its own
// series a figure. The first round after the start runs the representatives
// alone (2 latency and 6 bandwidth runs on two nodes), then full rounds.
TEST(SchedulerLoop, ArmsEachSeriesFromItsOwnFiguresAndWritesTheStateFile) {
  Config config = TwoKindConfig("baseline");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.schedule.jitter = 0.1;
  const std::string state_file = config.state_directory + "/state.json";
  Rig rig(
      config,
      [](const Task& task, int index) {
        Script s = Ok(0.001);
        s.value = task.kind == &LatencyProbe() ? 8e-8 : 1e10;
        if (index == 1) s.outcome = k::Outcome::kTimeout;  // the second representative's first run fails
        return s;
      },
      {}, OnDisk());
  ASSERT_TRUE(rig.host->RunUntil(kStart + 50 * kSecond));  // the representatives' round
  EXPECT_EQ(rig.probes->Runs().size(), 8u);
  EXPECT_TRUE(rig.Now().ready());
  ASSERT_TRUE(rig.host->RunUntil(kStart + 150 * kSecond));  // and a full round
  Snapshot now = rig.Now();
  EXPECT_EQ(now.rounds_completed, 2u);
  EXPECT_FALSE(now.baseline_complete);
  EXPECT_EQ(now.baseline_origin, "first_start");
  EXPECT_EQ(now.baseline.size(), 7u) << "the representatives with 2 figures each";
  EXPECT_EQ(now.baseline_progress.armed, 7);
  EXPECT_EQ(now.baseline_progress.recording, 9);
  EXPECT_DOUBLE_EQ(now.baseline_progress.recorded_ratio, 9.0 / 18.0) << "one figure of two each";
  ASSERT_TRUE(rig.host->RunUntil(kStart + 250 * kSecond));  // a third round
  now = rig.Now();
  EXPECT_EQ(now.rounds_completed, 3u);
  ASSERT_TRUE(now.baseline_complete);
  EXPECT_EQ(now.baseline.size(), 4u + 12u);
  EXPECT_EQ(now.baseline_progress.recording, 0);
  EXPECT_FALSE(now.baseline_progress.expected_armed);
  EXPECT_TRUE(now.state_write_successful);
  const auto state = nlohmann::json::parse(Slurp(state_file));
  EXPECT_EQ(state["format"], 2);
  ASSERT_EQ(state["series"].size(), 16u);
  for (const auto& series : state["series"]) EXPECT_TRUE(series.contains("baseline")) << series;
  EXPECT_NE(Slurp(state_file).find("8e-08"), std::string::npos) << Slurp(state_file);
}

// The published budget is the one in force: the learning budget while series
// record, kept across a reload that replans (which once wrote duty_cycle
// back), then duty_cycle once every series is armed.
TEST(SchedulerLoop, PublishesTheLearningBudgetWhileSeriesRecordAndDutyCycleOnceArmed) {
  Config config = TwoKindConfig("budget");
  config.schedule.duty_cycle = 0.01;
  config.schedule.learning_duty_cycle = 0.05;
  config.schedule.interval = seconds(100);
  Rig rig(config, [](const Task&, int) { return Ok(0.001); });
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.05) << "from the first plan on";
  ASSERT_TRUE(rig.host->RunUntil(kStart + 50 * kSecond));  // the representatives' round
  EXPECT_FALSE(rig.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.05);
  Config next = config;
  next.schedule.jitter = 0.2;
  rig.scheduler->Reload(next);
  ASSERT_TRUE(rig.host->RunUntil(kStart + 60 * kSecond));
  EXPECT_EQ(rig.host->plans.load(), 2);
  EXPECT_FALSE(rig.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.05) << "still learning after the replan";
  ASSERT_TRUE(rig.host->RunUntil(kStart + 600 * kSecond));
  ASSERT_TRUE(rig.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(rig.Now().duty_cycle_budget_ratio, 0.01);
}

// The daemon restarted on the same state directory takes what it learnt:
// the armed baselines (ready to compare before any round) and the recent
// figures; a reload with other latency settings re-records the latency series
// and keeps the bandwidth ones.
TEST(SchedulerLoop, RestoresTheBaselineAfterARestartAndRerecordsAKindWhoseSettingsChanged) {
  Config config = TwoKindConfig("restart");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.baseline.rounds = 1;
  const auto script = [](const Task&, int) { return Ok(0.001); };
  {
    Rig first(config, script, {}, OnDisk());
    ASSERT_TRUE(first.host->RunUntil(kStart + 150 * kSecond));
    ASSERT_TRUE(first.Now().baseline_complete);
  }
  Rig second(config, script, {}, OnDisk());
  EXPECT_EQ(second.Now().baseline_origin, "restored");
  EXPECT_TRUE(second.Now().baseline_complete) << "before any round";
  EXPECT_EQ(second.Now().baseline.size(), 16u);
  EXPECT_EQ(second.Now().recent_medians.size(), 0u) << "5 figures needed, 2 kept";
  ASSERT_TRUE(second.host->RunUntil(kStart + 50 * kSecond));
  Config next = config;
  next.probes.Of<LatencyConfig>().loads_per_sample += 1000;
  second.scheduler->Reload(next);
  ASSERT_TRUE(second.host->RunUntil(kStart + 60 * kSecond));
  EXPECT_EQ(second.Now().baseline_origin, "settings_changed");
  EXPECT_EQ(second.Now().baseline_progress.armed, 12 + 2) << "bandwidth kept, latency representatives re-armed";
  ASSERT_TRUE(second.host->RunUntil(kStart + 250 * kSecond));
  EXPECT_TRUE(second.Now().baseline_complete) << "recorded anew from the runs after the reload";
  const std::string loads = "latency.loads=" + std::to_string(next.probes.Of<LatencyConfig>().loads_per_sample);
  EXPECT_NE(Slurp(config.state_directory + "/state.json").find(loads), std::string::npos);
}

// `numaprobe baseline reset` (a request beside the state file) reaches the
// loop through ReloadState (SIGHUP with an unchanged config): a new baseline
// is recorded, and the round in progress goes on.
TEST(SchedulerLoop, TakesABaselineResetWithoutCuttingTheRound) {
  Config config = TwoKindConfig("reset");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.baseline.rounds = 1;
  Rig rig(
      config,
      [](const Task&, int index) {
        Script s = Ok(0.001);
        s.held = index == 8 + 16 + 3;  // in the third round (after the representatives' and a full one)
        return s;
      },
      {}, OnDisk());
  rig.host->AllowUntil(kStart + 250 * kSecond);
  ASSERT_TRUE(rig.probes->WaitForRuns(8 + 16 + 4));
  ASSERT_TRUE(rig.Now().baseline_complete);
  ASSERT_EQ(WriteStateFile(config.state_directory, kRequestFile, FormatRequest({"reset", "test-1"})), "");
  rig.scheduler->ReloadState();
  rig.probes->Release();
  ASSERT_TRUE(rig.host->RunUntil(kStart + 250 * kSecond));
  const Snapshot now = rig.Now();
  EXPECT_EQ(now.baseline_origin, "reset");
  EXPECT_EQ(now.rounds_completed, 3u) << "the third round was not cut short";
  EXPECT_EQ(rig.probes->Runs().size(), 8u + 32u);
  EXPECT_FALSE(std::filesystem::exists(config.state_directory + "/" + kRequestFile)) << "acted on once";
  EXPECT_EQ(rig.host->plans.load(), 1) << "a state reload does not replan";
  ASSERT_TRUE(rig.host->RunUntil(kStart + 350 * kSecond));
  EXPECT_TRUE(rig.Now().baseline_complete) << "recorded anew";
  EXPECT_EQ(rig.Now().baseline_origin, "reset");
}

// A state file that cannot be parsed is reported (origin state_file_corrupt),
// kept as a copy, and replaced.
TEST(SchedulerLoop, ReplacesACorruptStateFile) {
  Config config = TwoKindConfig("corrupt");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.baseline.rounds = 1;
  std::filesystem::create_directories(config.state_directory);
  std::ofstream(config.state_directory + "/state.json") << "{not json";
  Rig rig(
      config, [](const Task&, int) { return Ok(0.001); }, {}, OnDisk());
  EXPECT_EQ(rig.Now().baseline_origin, "state_file_corrupt");
  ASSERT_TRUE(rig.host->RunUntil(kStart + 150 * kSecond));
  ASSERT_TRUE(rig.Now().baseline_complete);
  const auto state = nlohmann::json::parse(Slurp(config.state_directory + "/state.json"));
  EXPECT_EQ(state["series"].size(), 16u);
  int copies = 0;
  for (const auto& entry : std::filesystem::directory_iterator(config.state_directory)) {
    if (entry.path().filename().string().rfind("state.json.corrupt-", 0) == 0) {
      ++copies;
      EXPECT_EQ(Slurp(entry.path().string()), "{not json");
    }
  }
  EXPECT_EQ(copies, 1);
}

// A state directory that cannot be written: counted and retried (at most
// every 30 s), written once it can be.
TEST(SchedulerLoop, RetriesAFailedStateWriteEveryRound) {
  Config config = TwoKindConfig("state_write");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  config.baseline.rounds = 1;
  std::ofstream(config.state_directory) << "a file where the directory should be";
  Rig rig(
      config, [](const Task&, int) { return Ok(0.001); }, {}, OnDisk());
  ASSERT_TRUE(rig.host->RunUntil(kStart + 250 * kSecond));  // 3 rounds
  Snapshot now = rig.Now();
  EXPECT_TRUE(now.baseline_complete);
  EXPECT_FALSE(now.state_write_successful);
  EXPECT_GE(now.state_write_failures_total, 2u) << "retried after the first failure";
  std::filesystem::remove(config.state_directory);
  ASSERT_TRUE(rig.host->RunUntil(kStart + 360 * kSecond));
  now = rig.Now();
  EXPECT_TRUE(now.state_write_successful);
  EXPECT_TRUE(std::filesystem::exists(config.state_directory + "/state.json"));
}

// A reload in the middle of a round cuts the round short after the running
// probe and starts a round of the new plan at once.
TEST(SchedulerLoop, AReloadMidRoundReplansAfterTheRunningProbe) {
  Config config = TwoKindConfig("reload");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  Rig rig(config, [](const Task&, int index) {
    Script s = Ok(0.001);
    s.held = index == 2;
    return s;
  });
  rig.host->AllowUntil(kStart + 50 * kSecond);
  ASSERT_TRUE(rig.probes->WaitForRuns(3));
  Config next = config;
  next.probes.Of<LatencyConfig>().enabled = false;
  rig.scheduler->Reload(next);
  rig.probes->Release();
  ASSERT_TRUE(rig.host->RunUntil(kStart + 50 * kSecond));
  const auto runs = rig.probes->Runs();
  ASSERT_EQ(runs.size(), 3u + 6u) << "the cut round, then the new plan's representatives: bandwidth only";
  for (std::size_t i = 3; i < runs.size(); ++i) EXPECT_EQ(runs[i].kind, &BandwidthProbe()) << i;
  EXPECT_LT(runs[3].start_ns - runs[2].end_ns, kSecond) << "the new round starts at once";
  EXPECT_EQ(rig.host->plans.load(), 2);
  EXPECT_EQ(rig.probes->adopted.load(), 2);
  EXPECT_EQ(rig.Now().rounds_completed, 1u) << "the cut round does not count";
}

// The container's cpuset shrinks to node 0 while the loop waits: it replans
// on what is left.
TEST(SchedulerLoop, ReplansWhenTheCpusetShrinks) {
  Config config = TwoKindConfig("cpuset");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(100);
  Rig rig(config, [](const Task&, int) { return Ok(0.001); });
  ASSERT_TRUE(rig.host->RunUntil(kStart + 50 * kSecond));
  const std::size_t before = rig.probes->Runs().size();
  ASSERT_EQ(before, 8u) << "the representatives";
  rig.host->SetRestriction({std::set<int>{0, 1}, std::set<int>{0}});
  ASSERT_TRUE(rig.host->RunUntil(kStart + 250 * kSecond));
  const auto runs = rig.probes->Runs();
  ASSERT_GT(runs.size(), before);
  for (std::size_t i = before; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].target.pair.cpu_node, 0) << i;
    EXPECT_EQ(runs[i].target.pair.mem_node, 0) << i;
  }
  EXPECT_EQ(rig.host->plans.load(), 2);
}

TEST(SchedulerLoop, StopWhileAProbeRunsCancelsIt) {
  Config config = TwoKindConfig("stop");
  Rig rig(config, [](const Task&, int) {
    Script s = Ok(0.001);
    s.held = true;
    return s;
  });
  ASSERT_TRUE(rig.probes->WaitForRuns(1));
  EXPECT_TRUE(rig.scheduler->Stop());
  EXPECT_FALSE(rig.probes->abandoned.load());
  EXPECT_EQ(rig.Now().runs_total.count({"latency", "cancelled"}), 1u);
  EXPECT_EQ(rig.Now().rounds_completed, 0u);
}

// A probe starved of CPU never notices the stop: the loop gives up on it
// (Stop returns false, the caller exits without destroying the scheduler's
// state, which the abandoned run may still use).
TEST(SchedulerLoop, StopAbandonsAProbeThatDoesNotNoticeIt) {
#if defined(__SANITIZE_ADDRESS__)
  __lsan_disable();  // the abandoned loop is left behind on purpose
#endif
  auto rig = std::make_unique<Rig>(TwoKindConfig("abandon"), [](const Task&, int) {
    Script s = Ok(0.001);
    s.deaf = true;
    return s;
  });
#if defined(__SANITIZE_ADDRESS__)
  __lsan_enable();
#endif
  ASSERT_TRUE(rig->probes->WaitForRuns(1));
  EXPECT_FALSE(rig->scheduler->Stop());
  EXPECT_TRUE(rig->probes->abandoned.load());
  (void)rig->scheduler.release();  // as cmd_serve does: exit without destroying it
}

// A config for confirmation runs: a 1-round baseline, rounds every 100 s
// without jitter (round n starts at kStart + n x 100 s), a budget pause of
// 0.1 s after a visit of runs costing 1 ms.
Config ConfirmationConfig(const std::string& name) {
  Config config = TwoKindConfig(name);
  config.schedule.interval = seconds(100);
  config.schedule.jitter = 0;
  config.baseline.rounds = 1;
  return config;
}
constexpr double kConfirmCost = 0.001;
constexpr double kLatency = 1e-7, kBandwidth = 1e10;

bool Is(const Started& run, const ProbeKind& kind, int cpu_node, int mem_node, const std::string& op = "") {
  return run.kind == &kind && run.target.pair.cpu_node == cpu_node && run.target.pair.mem_node == mem_node &&
         (op.empty() || run.target.variant == op);
}

std::vector<std::size_t> ConfirmationsOf(const std::vector<Started>& runs) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].confirmation) at.push_back(i);
  }
  return at;
}

std::optional<double> RecentMedianOf(const Snapshot& now, const std::string& probe, int cpu_node, int mem_node,
                                     const std::string& op) {
  for (const BaselineValue& v : now.recent_medians) {
    if (v.probe == probe && v.cpu_node == cpu_node && v.mem_node == mem_node && v.op == op) return v.value;
  }
  return std::nullopt;
}

// One latency figure 15% high while its median is inside the band: the next
// 4 runs are of that pair and nothing else, each a visit of its own after the
// budget's pause; the round then goes on, every run of it once. The 4 healthy
// figures outvote the outlier: the published median does not move.
TEST(SchedulerLoop, ConfirmsAFigureBeyondItsBandByTheNextFourRunsOfItsPair) {
  Config config = ConfirmationConfig("confirm_outlier");
  const std::int64_t outlier_round = kStart + 1000 * kSecond;  // 10 figures of the series before
  std::atomic<bool> outlier_sent{false};
  Rig rig(config, [&](const Task& task, int) {
    // The clock the loop is at (the rig is complete before the loop starts).
    const std::int64_t now = rig.host->MonotonicNs();
    Script s = Ok(kConfirmCost);
    s.value = task.kind == &LatencyProbe() ? kLatency : kBandwidth;
    const bool suspect = task.kind == &LatencyProbe() && task.target.pair.cpu_node == 0 &&
                         task.target.pair.mem_node == 1 && !task.confirmation;
    if (suspect && now >= outlier_round && !outlier_sent.exchange(true)) s.value = 1.15 * kLatency;
    return s;
  });
  ASSERT_TRUE(rig.host->RunUntil(outlier_round + 50 * kSecond));
  const auto runs = rig.probes->Runs();
  std::size_t outlier = 0;
  while (outlier < runs.size() && runs[outlier].start_ns < outlier_round) ++outlier;
  while (outlier < runs.size() && !Is(runs[outlier], LatencyProbe(), 0, 1)) ++outlier;
  ASSERT_LT(outlier, runs.size());
  ASSERT_TRUE(outlier_sent.load());

  const std::vector<std::size_t> confirmations = ConfirmationsOf(runs);
  ASSERT_EQ(confirmations.size(), 4u);
  // Latency 1 -> 1 shares the outlier's buffers (memory node 1) and ends its visit.
  ASSERT_TRUE(Is(runs[outlier + 1], LatencyProbe(), 1, 1));
  const auto pause_ns = static_cast<std::int64_t>(kConfirmCost / config.schedule.duty_cycle * kSecond);
  for (std::size_t n = 0; n < 4; ++n) {
    const Started& run = runs[outlier + 2 + n];
    EXPECT_EQ(confirmations[n], outlier + 2 + n) << "right after the outlier's visit";
    EXPECT_TRUE(Is(run, LatencyProbe(), 0, 1)) << n;
    EXPECT_EQ(run.attempt, 0);
    EXPECT_GE(run.start_ns, runs[outlier + 1 + n].end_ns + pause_ns) << "a visit of its own, inside the budget";
  }
  EXPECT_GE(runs[outlier + 6].start_ns, runs[outlier + 5].end_ns + pause_ns) << "the pause after the last one";
  // The round of the outlier: its 16 runs once each, plus the 4 confirmations.
  std::size_t round_runs = 0;
  for (const Started& run : runs) round_runs += run.start_ns >= outlier_round && !run.confirmation;
  EXPECT_EQ(round_runs, 16u);
  EXPECT_EQ(RecentMedianOf(rig.Now(), "latency", 0, 1, ""), kLatency);
  const auto latency_runs =
      std::count_if(runs.begin(), runs.end(), [](const Started& r) { return r.kind == &LatencyProbe(); });
  EXPECT_EQ(rig.Now().runs_total.at({"latency", "ok"}), static_cast<std::uint64_t>(latency_runs))
      << "confirmations are counted as runs";
}

// NUMAPROBE_TEST_CONFIRMATIONS=off (the hooks the loop's environment hands
// it): the outlier of the test above earns no confirmation runs; every round
// runs its tasks and nothing more, and the outlier is one figure of the
// series like any other.
TEST(SchedulerLoop, ConfirmsNothingUnderTheTestHookThatTurnsConfirmationsOff) {
  Config config = ConfirmationConfig("confirm_off");
  const std::int64_t outlier_round = kStart + 1000 * kSecond;
  std::atomic<bool> outlier_sent{false};
  TestHooks hooks;
  hooks.confirmations_off = true;
  auto host = ScriptedHost(kTwoNodes, {std::set<int>{0, 1, 2, 3}, std::set<int>{0, 1}},
                           std::make_shared<std::map<std::string, std::string>>(), kStart, hooks);
  Rig rig(
      config,
      [&](const Task& task, int) {
        const std::int64_t now = rig.host->MonotonicNs();
        Script s = Ok(kConfirmCost);
        s.value = task.kind == &LatencyProbe() ? kLatency : kBandwidth;
        const bool suspect = task.kind == &LatencyProbe() && task.target.pair.cpu_node == 0 &&
                             task.target.pair.mem_node == 1 && !task.confirmation;
        if (suspect && now >= outlier_round && !outlier_sent.exchange(true)) s.value = 1.15 * kLatency;
        return s;
      },
      {}, std::move(host));
  ASSERT_TRUE(rig.host->RunUntil(outlier_round + 250 * kSecond));
  ASSERT_TRUE(outlier_sent.load());
  const auto runs = rig.probes->Runs();
  EXPECT_TRUE(ConfirmationsOf(runs).empty());
  // Parked waiting for the round at 1300 s: every round ran whole, the first
  // the representatives' alone (2 latency and 6 bandwidth runs).
  EXPECT_EQ(rig.Now().rounds_completed, 13u);
  EXPECT_EQ(runs.size(), 8u + 16u * 12u) << "the rounds' runs and nothing more";
  EXPECT_EQ(rig.Now().runs_total.at({"latency", "ok"}), 2u + 4u * 12u);
}

// A lasting +10% step: its first figure is confirmed, which moves the median
// beyond the band within the round of the onset; from then on the median is
// beyond and nothing more is confirmed, however many rounds follow.
TEST(SchedulerLoop, ConfirmsAStepOnceAndNotWhileTheMedianIsBeyondTheBand) {
  Config config = ConfirmationConfig("confirm_step");
  const std::int64_t onset = kStart + 1000 * kSecond;
  Rig rig(config, [&](const Task& task, int) {
    // The clock the loop is at (the rig is complete before the loop starts).
    const std::int64_t now = rig.host->MonotonicNs();
    Script s = Ok(kConfirmCost);
    s.value = task.kind == &LatencyProbe() ? kLatency : kBandwidth;
    const bool stepped = task.kind == &LatencyProbe() && task.target.pair.cpu_node == 1 &&
                         task.target.pair.mem_node == 0 && now >= onset;
    if (stepped) s.value = 1.10 * kLatency;
    return s;
  });
  ASSERT_TRUE(rig.host->RunUntil(onset + 50 * kSecond));
  EXPECT_EQ(RecentMedianOf(rig.Now(), "latency", 1, 0, ""), 1.10 * kLatency) << "the round of the onset shows it";
  ASSERT_TRUE(rig.host->RunUntil(onset + 2000 * kSecond));
  const auto runs = rig.probes->Runs();
  const std::vector<std::size_t> confirmations = ConfirmationsOf(runs);
  ASSERT_EQ(confirmations.size(), 4u);
  for (std::size_t at : confirmations) {
    EXPECT_TRUE(Is(runs[at], LatencyProbe(), 1, 0)) << at;
    EXPECT_GE(runs[at].start_ns, onset);
    EXPECT_LT(runs[at].start_ns, onset + 100 * kSecond) << "in the round of the onset";
  }
}

// Not confirmed: a figure inside its band (latency +4%, bandwidth -8%), a
// figure better than its baseline (bandwidth +30%, latency -20%), any figure
// while the baseline is being recorded. A bandwidth drop beyond its band
// (-15%) is confirmed by runs of that op alone.
TEST(SchedulerLoop, ConfirmsOnlyRegressionsBeyondTheBand) {
  Config config = ConfirmationConfig("confirm_band");
  config.baseline.rounds = 3;
  const std::int64_t drifted = kStart + 1000 * kSecond, dropped = kStart + 2000 * kSecond;
  Rig rig(config, [&](const Task& task, int) {
    // The clock the loop is at (the rig is complete before the loop starts).
    const std::int64_t now = rig.host->MonotonicNs();
    Script s = Ok(kConfirmCost);
    const int from = task.target.pair.cpu_node, to = task.target.pair.mem_node;
    const bool after = now >= drifted;
    if (task.kind == &LatencyProbe()) {
      s.value = kLatency;
      // The first of the baseline's 3 rounds: far beyond the band of the
      // baseline the 3 rounds' median will be, while there is none yet.
      if (now < kStart + 50 * kSecond) s.value = 1.5 * kLatency;
      if (after && from == 0 && to == 0) s.value = 1.04 * kLatency;
      if (after && from == 1 && to == 1) s.value = 0.80 * kLatency;
    } else {
      s.value = kBandwidth;
      if (after && from == 0 && to == 1 && task.target.variant == "read") s.value = 0.92 * kBandwidth;
      if (after && from == 1 && to == 0 && task.target.variant == "write") s.value = 1.30 * kBandwidth;
      if (now >= dropped && from == 1 && to == 1 && task.target.variant == "copy") {
        s.value = 0.85 * kBandwidth;
      }
    }
    return s;
  });
  ASSERT_TRUE(rig.host->RunUntil(dropped - 50 * kSecond));
  ASSERT_TRUE(rig.Now().baseline_complete);
  EXPECT_EQ(ConfirmationsOf(rig.probes->Runs()).size(), 0u);
  ASSERT_TRUE(rig.host->RunUntil(dropped + 1000 * kSecond));
  const auto runs = rig.probes->Runs();
  const std::vector<std::size_t> confirmations = ConfirmationsOf(runs);
  ASSERT_EQ(confirmations.size(), 4u);
  for (std::size_t at : confirmations) EXPECT_TRUE(Is(runs[at], BandwidthProbe(), 1, 1, "copy")) << at;
}

// With the systemd watchdog on, the loop pings at least every interval, while
// it waits for the next round and while a long probe runs.
TEST(SchedulerLoop, FeedsTheWatchdogWhileWaitingAndWhileAProbeRuns) {
  Config config = TwoKindConfig("watchdog");
  config.schedule.duty_cycle = 0.5;
  config.schedule.interval = seconds(300);
  Rig rig(
      config,
      [](const Task&, int index) {
        Script s = Ok(0.001);
        if (index == 20) s.seconds = 30;  // a probe waiting 30 s for the lock
        return s;
      },
      milliseconds(2000));
  ASSERT_TRUE(rig.host->RunUntil(kStart + 3600 * kSecond));
  const auto pings = rig.host->WatchdogPings();
  ASSERT_GT(pings.size(), 3600u / 2);
  for (std::size_t i = 1; i < pings.size(); ++i) ASSERT_LE(pings[i] - pings[i - 1], 2 * kSecond) << i;
  const Started long_run = rig.probes->Runs()[20];
  ASSERT_EQ(long_run.end_ns - long_run.start_ns, 30 * kSecond);
  const auto during = std::count_if(pings.begin(), pings.end(),
                                    [&](std::int64_t at) { return at > long_run.start_ns && at < long_run.end_ns; });
  EXPECT_GE(during, 15);
}

}  // namespace
}  // namespace numaprobe::daemon
