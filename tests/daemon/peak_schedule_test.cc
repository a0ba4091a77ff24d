// SPDX-License-Identifier: Apache-2.0
// The daemon's side of peak bandwidth: which pairs it measures (each node's
// own memory and one remote node per distance), its idle gate, and the
// schedule of its own it runs on between rounds (serve/own_schedule.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/idle_gate.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/peak_thread_search.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/own_schedule.h"
#include "daemon/serve/round_tasks.h"
#include "tests/daemon/topology_fixture.h"

namespace numaprobe::daemon {
namespace {

using kernels::Topology;
using ::testing::HasSubstr;

Plan PeakPlan(const Topology& topology) {
  auto plan = BuildPlan(PlanOptions{}, topology);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.failure().reason);
  return plan.ok() ? std::move(plan).value() : Plan{};
}

Config PeakEnabled() {
  Config config;
  config.probes.Of<PeakBandwidthConfig>().enabled = true;
  return config;
}

// The daemon's pairs: per CPU node, its own memory and exactly one remote
// node at each firmware distance it has to the others; read and write each.
TEST(PeakBandwidthTargets, DaemonMeasuresLocalAndOneRemotePerDistance) {
  for (const char* fixture : {"8node_2s_snc4.xml", "16node_4s_snc4.xml", "2s_nps2_cxl.xml"}) {
    SCOPED_TRACE(fixture);
    const Topology topology = TopologyFixture(fixture);
    const Plan plan = PeakPlan(topology);
    const std::vector<ProbeTarget> targets =
        PeakBandwidthProbe().Targets(plan, ProbeSettingsFrom(PeakEnabled()), topology);
    // (cpu_node, distance) -> the memory nodes measured at it, per op.
    std::map<std::tuple<int, int, std::string>, std::set<int>> measured;
    for (const ProbeTarget& t : targets) {
      measured[{t.pair.cpu_node, topology.Distance(t.pair.cpu_node, t.pair.mem_node), t.variant}].insert(
          t.pair.mem_node);
    }
    std::set<std::tuple<int, int, std::string>> wanted;
    for (const MemoryPair& p : plan.memory_pairs) {
      for (const char* op : {"read", "write"})
        wanted.insert({p.cpu_node, topology.Distance(p.cpu_node, p.mem_node), op});
    }
    std::set<std::tuple<int, int, std::string>> got;
    for (const auto& [key, nodes] : measured) {
      got.insert(key);
      EXPECT_EQ(nodes.size(), 1u) << "cpu node " << std::get<0>(key) << " distance " << std::get<1>(key);
    }
    EXPECT_EQ(got, wanted);
    // The local pair is the one at the local distance.
    for (const ProbeTarget& t : targets) {
      if (topology.Distance(t.pair.cpu_node, t.pair.mem_node) == topology.Distance(t.pair.cpu_node, t.pair.cpu_node)) {
        EXPECT_EQ(t.pair.mem_node, t.pair.cpu_node);
      }
    }
    EXPECT_LT(targets.size(), 2 * plan.memory_pairs.size()) << "fewer than the whole matrix";
  }
}

// `numaprobe probe` (AfterFlags): the whole matrix, and no idle gate.
TEST(PeakBandwidthTargets, TerminalMeasuresTheWholeMatrix) {
  const Topology topology = TopologyFixture("8node_2s_snc4.xml");
  const Plan plan = PeakPlan(topology);
  ProbeSettings settings = ProbeSettingsFrom(Config{});
  EXPECT_TRUE(settings.Of<PeakBandwidthSettings>().max_busy.has_value());
  for (const ProbeKind* kind : ProbeTable()) kind->command_line().AfterFlags(settings);
  EXPECT_FALSE(settings.Of<PeakBandwidthSettings>().max_busy.has_value());
  EXPECT_EQ(PeakBandwidthProbe().Targets(plan, settings, topology).size(), 2 * plan.memory_pairs.size());
}

TEST(IdleGate, OpensAtOrBelowTheGateAndNamesTheBusyShareAbove) {
  const std::map<int, double> busy{{0, 0.05}, {1, 0.15}, {2, 1.0}, {3, 1.0}, {4, 0.2}};
  EXPECT_FALSE(IdleGateClosed(busy, {0, 1}, 0.10));  // mean 10%
  EXPECT_FALSE(IdleGateClosed(busy, {0}, 0.05));
  const auto closed = IdleGateClosed(busy, {2, 4}, 0.10);
  ASSERT_TRUE(closed);
  EXPECT_THAT(*closed, HasSubstr("its 2 CPUs were 60% busy"));
  EXPECT_THAT(*closed, HasSubstr("above the idle gate of 10%"));
  // A gate of 1 never closes; CPUs without counters count as idle.
  EXPECT_FALSE(IdleGateClosed(busy, {2, 3}, 1.0));
  EXPECT_FALSE(IdleGateClosed({}, {0, 1}, 0.0));
}

// Rounds never run an own-schedule kind; OwnScheduleTasks has only them.
TEST(OwnSchedule, PeakBandwidthIsNotInRounds) {
  const Topology topology = TopologyFixture("8node_2s_snc4.xml");
  const Plan plan = PeakPlan(topology);
  const Config config = PeakEnabled();
  for (const Task& task : RoundTasks(plan, config, topology)) EXPECT_NE(task.kind, &PeakBandwidthProbe());
  const std::vector<Task> own = OwnScheduleTasks(plan, config, topology);
  ASSERT_FALSE(own.empty());
  for (const Task& task : own) EXPECT_EQ(task.kind, &PeakBandwidthProbe());
  EXPECT_TRUE(OwnScheduleTasks(plan, Config{}, topology).empty()) << "off by default";
}

// The counts a search measures: every CPU first, then 1, 2, 4, ... below.
TEST(PeakThreadSearch, MeasuresEveryCpuThenPowersOfTwo) {
  EXPECT_EQ(SearchCounts(0), (std::vector<std::size_t>{}));
  EXPECT_EQ(SearchCounts(1), (std::vector<std::size_t>{1}));
  EXPECT_EQ(SearchCounts(2), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(SearchCounts(6), (std::vector<std::size_t>{6, 1, 2, 4}));
  EXPECT_EQ(SearchCounts(8), (std::vector<std::size_t>{8, 1, 2, 4}));
}

// The choice, forced with figures: the count after the first within 97% of
// the best (the knee), or every CPU.
TEST(PeakThreadSearch, FindsTheCountPastTheKnee) {
  using T = ThreadTrial;
  EXPECT_EQ(FoundThreads({{32, 100}}, 32), 0u) << "the reference alone decides nothing";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}}, 32), 0u) << "go on";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}, {8, 97}}, 32), 0u) << "the knee: measure 16 next";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}, {8, 97}, {16, 99}}, 32), 16u) << "past the knee";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}, {8, 96.9}}, 32), 0u) << "just under: go on";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}, {8, 90}, {16, 97}}, 32), 32u)
      << "the knee at the largest count below every CPU: every CPU";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 24}, {4, 48}, {8, 90}, {16, 95}}, 32), 32u)
      << "no count reached it: every CPU";
  EXPECT_EQ(FoundThreads({{32, 90}, {1, 30}, {2, 100}, {4, 100}}, 32), 4u)
      << "every CPU contending reads less: the best of all counts is the peak";
  EXPECT_EQ(FoundThreads({{32, 100}, {1, 12}, {2, 97}, {4, 140}}, 32), 0u)
      << "a higher figure past the knee moves the knee: 4, and 8 is measured next";
  EXPECT_EQ(FoundThreads({T{1, 20}}, 1), 1u) << "one CPU: nothing to search";
  EXPECT_EQ(FoundThreads({{2, 20}, {1, 19.6}}, 2), 2u) << "the count after 1 is every CPU";
  EXPECT_EQ(FoundThreads({{3, 20}, {1, 19.6}}, 3), 0u) << "2 next";
  EXPECT_EQ(FoundThreads({{3, 20}, {1, 19.6}, {2, 20}}, 3), 2u);
}

TEST(PeakThreadSearch, DescribesItsTrials) {
  EXPECT_EQ(DescribeTrials({{8, 20.3e9}, {1, 9.8e9}, {2, 18.9e9}, {4, 20.1e9}}),
            "1: 9.8, 2: 18.9, 4: 20.1 GB/s (every CPU, 8: 20.3)");
  EXPECT_EQ(DescribeTrials({{1, 9.8e9}}), "GB/s (every CPU, 1: 9.8)");
}

// The daemon searches unless a count is configured; a terminal never does.
TEST(PeakThreadSearch, TheDaemonSearchesUnlessACountIsConfigured) {
  Config config = PeakEnabled();
  EXPECT_TRUE(ProbeSettingsFrom(config).Of<PeakBandwidthSettings>().search_threads);
  config.probes.Of<PeakBandwidthConfig>().threads = 4;
  EXPECT_FALSE(ProbeSettingsFrom(config).Of<PeakBandwidthSettings>().search_threads);
  ProbeSettings terminal = ProbeSettingsFrom(PeakEnabled());
  PeakBandwidthProbe().command_line().AfterFlags(terminal);
  EXPECT_FALSE(terminal.Of<PeakBandwidthSettings>().search_threads);
}

constexpr std::int64_t kHourNs = 3'600'000'000'000;

// Both clocks at `monotonic_ns` of a daemon started at Unix time 1.8e9.
ScheduleClock At(std::int64_t monotonic_ns, double start_unix = 1.8e9) {
  return ScheduleClock{monotonic_ns, start_unix + static_cast<double>(monotonic_ns) / 1e9};
}

struct Schedule {
  // A start: `finished` is what the state file kept of the last run.
  explicit Schedule(const std::map<std::string, double, std::less<>>& finished = {}, ScheduleClock now = At(0))
      : topology(TopologyFixture("8node_2s_snc4.xml")), plan(PeakPlan(topology)) {
    config.probes.Of<PeakBandwidthConfig>().interval = std::chrono::hours(6);
    Adopt(finished, now);
    cycle = OwnScheduleTasks(plan, config, topology).size();
  }
  // A replan (the same queue) or, on a new one, a start.
  void Adopt(const std::map<std::string, double, std::less<>>& finished = {}, ScheduleClock now = At(0)) {
    queue.Adopt(OwnScheduleTasks(plan, config, topology), config, finished, now);
  }
  std::vector<Task>& Queue(std::int64_t now_ns, bool recording = false) {
    return queue.Due(At(now_ns), [=](const ProbeKind&) { return recording; });
  }
  std::size_t Due(std::int64_t now_ns, bool recording = false) { return Queue(now_ns, recording).size(); }
  Topology topology;
  Plan plan;
  Config config = PeakEnabled();
  OwnScheduleQueue queue;
  std::size_t cycle = 0;
};

TEST(OwnSchedule, FirstCycleAtOnceThenOneEveryInterval) {
  Schedule s;
  EXPECT_EQ(s.Due(kHourNs), s.cycle) << "at start";
  std::vector<Task>& queue = s.Queue(kHourNs);
  queue.clear();  // all ran
  EXPECT_EQ(s.Due(kHourNs + 5 * kHourNs), 0u);
  EXPECT_EQ(s.Due(kHourNs + 6 * kHourNs), s.cycle) << "6h after the last cycle began";
}

TEST(OwnSchedule, CyclesBackToBackWhileTheBaselineRecords) {
  Schedule s;
  s.Queue(0, /*recording=*/true).clear();
  EXPECT_EQ(s.Due(1, /*recording=*/true), s.cycle);
}

TEST(OwnSchedule, ACycleUnderWayFinishesBeforeTheNext) {
  Schedule s;
  std::vector<Task>& queue = s.Queue(0);
  queue.erase(queue.begin(), queue.begin() + 2);  // two ran; the budget held the rest
  EXPECT_EQ(s.Due(7 * kHourNs), s.cycle - 2) << "the rest, not a new cycle on top";
}

TEST(OwnSchedule, AReplanMidCycleRunsTheNewPlanAtOnce) {
  Schedule s;
  std::vector<Task>& queue = s.Queue(0);
  queue.erase(queue.begin());  // one ran, then a cpuset change replans
  s.Adopt();
  EXPECT_EQ(s.Due(1), s.cycle) << "the whole new plan, not 6h later";
  // A finished cycle keeps its interval across a replan.
  s.Queue(1).clear();
  s.Adopt();
  EXPECT_EQ(s.Due(2), 0u);
}

TEST(OwnSchedule, SkippedRunsAreTriedAgainAtTheNextRound) {
  Schedule s;
  std::vector<Task>& queue = s.Queue(0);
  const Task skipped = queue.front();
  s.queue.Skipped(skipped);
  queue.clear();
  std::vector<Task>& next = s.Queue(1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next.front().target, skipped.target);
}

TEST(OwnSchedule, ItsBudgetIsItsOwn) {
  Schedule s;
  s.config.probes.Of<PeakBandwidthConfig>().duty_cycle = 0.05;
  s.Adopt();
  DutyBudget& budget = s.queue.Budget(PeakBandwidthProbe());
  EXPECT_DOUBLE_EQ(budget.ratio(), 0.05);
  budget.Charge(0, 1'000'000'000, 1.0);
  EXPECT_EQ(budget.next_allowed_ns(), 21'000'000'000) << "1 CPU-s / 0.05 after its end";
  // A replan keeps what the budget owes and when the cycle began.
  s.Queue(0).clear();
  s.Adopt();
  EXPECT_EQ(s.queue.Budget(PeakBandwidthProbe()).next_allowed_ns(), 21'000'000'000);
  EXPECT_EQ(s.Due(kHourNs), 0u);
}

// A restart waits out the interval of the last finished cycle (the state
// file keeps its Unix start), whatever the new monotonic clock reads.
TEST(OwnSchedule, ARestartWaitsOutTheLastFinishedCycle) {
  Schedule before;
  EXPECT_TRUE(before.queue.FinishedCycles().empty()) << "no cycle yet";
  std::vector<Task>& queue = before.Queue(kHourNs);
  queue.erase(queue.begin());
  EXPECT_TRUE(before.queue.FinishedCycles().empty()) << "a cycle under way has not finished";
  queue.clear();
  const auto finished = before.queue.FinishedCycles();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_DOUBLE_EQ(finished.at("peak_bandwidth"), At(kHourNs).unix_seconds) << "when it began";
  // The next cycle under way: the last finished one is still the first.
  EXPECT_EQ(before.Due(7 * kHourNs), before.cycle);
  EXPECT_DOUBLE_EQ(before.queue.FinishedCycles().at("peak_bandwidth"), At(kHourNs).unix_seconds);

  // Restarted 2 h after that cycle began, on a monotonic clock that starts anew.
  const double restart_unix = At(kHourNs).unix_seconds + 2 * 3600;
  const std::int64_t restart_ns = 5;
  Schedule after(finished, ScheduleClock{restart_ns, restart_unix});
  EXPECT_EQ(after.queue.Due(ScheduleClock{restart_ns, restart_unix}, [](const ProbeKind&) { return false; }).size(),
            0u);
  const auto due_at = [&](std::int64_t ns) {
    return after.queue
        .Due(ScheduleClock{ns, restart_unix + static_cast<double>(ns - restart_ns) / 1e9},
             [](const ProbeKind&) { return false; })
        .size();
  };
  EXPECT_EQ(due_at(restart_ns + 3 * kHourNs), 0u) << "5 h after it began";
  EXPECT_EQ(due_at(restart_ns + 4 * kHourNs), after.cycle) << "6 h after it began";

  // Unless its series record their baseline (settings or topology changed).
  Schedule recording(finished, ScheduleClock{restart_ns, restart_unix});
  EXPECT_EQ(recording.Due(restart_ns, /*recording=*/true), recording.cycle);
}

// A last cycle dated in the future (the clock was set back) counts as now:
// the next cycle comes an interval later, not never.
TEST(OwnSchedule, ACycleDatedInTheFutureCountsAsNow) {
  Schedule s({{"peak_bandwidth", At(0).unix_seconds + 1e6}});
  EXPECT_EQ(s.Due(5 * kHourNs), 0u);
  EXPECT_EQ(s.Due(6 * kHourNs), s.cycle);
}

}  // namespace
}  // namespace numaprobe::daemon
