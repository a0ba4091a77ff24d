// SPDX-License-Identifier: Apache-2.0
// The daemon's side of peak bandwidth: which pairs it measures (each node's
// own memory and one remote node per distance), its idle gate, and the
// schedule of its own it runs on between rounds (serve/own_schedule.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/idle_gate.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/own_schedule.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {
namespace {

using kernels::Topology;
using ::testing::HasSubstr;

Topology PeakFixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(NUMAPROBE_FIXTURES) / "topology" / name);
  std::stringstream text;
  text << in.rdbuf();
  auto topology = Topology::FromXml(text.str(), {});
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.failure().reason);
  return topology.ok() ? std::move(topology).value() : Topology{};
}

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
    const Topology topology = PeakFixture(fixture);
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
  const Topology topology = PeakFixture("8node_2s_snc4.xml");
  const Plan plan = PeakPlan(topology);
  ProbeSettings settings = ProbeSettingsFrom(Config{});
  EXPECT_TRUE(settings.Of<PeakBandwidthSettings>().max_busy.has_value());
  for (const ProbeKind* kind : ProbeTable()) kind->AfterFlags(settings);
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
  const Topology topology = PeakFixture("8node_2s_snc4.xml");
  const Plan plan = PeakPlan(topology);
  const Config config = PeakEnabled();
  for (const Task& task : RoundTasks(plan, config, topology)) EXPECT_NE(task.kind, &PeakBandwidthProbe());
  const std::vector<Task> own = OwnScheduleTasks(plan, config, topology);
  ASSERT_FALSE(own.empty());
  for (const Task& task : own) EXPECT_EQ(task.kind, &PeakBandwidthProbe());
  EXPECT_TRUE(OwnScheduleTasks(plan, Config{}, topology).empty()) << "off by default";
}

constexpr std::int64_t kHourNs = 3'600'000'000'000;

struct Schedule {
  explicit Schedule(const char* fixture = "8node_2s_snc4.xml")
      : topology(PeakFixture(fixture)), plan(PeakPlan(topology)) {
    config.probes.Of<PeakBandwidthConfig>().interval = std::chrono::hours(6);
    queue.Adopt(OwnScheduleTasks(plan, config, topology), config);
    cycle = OwnScheduleTasks(plan, config, topology).size();
  }
  std::size_t Due(std::int64_t now_ns, bool recording = false) {
    return queue.Due(now_ns, [&](const ProbeKind&) { return recording; }).size();
  }
  Topology topology;
  Plan plan;
  Config config = PeakEnabled();
  OwnScheduleQueue queue;
  std::size_t cycle = 0;
};

TEST(OwnSchedule, FirstCycleAtOnceThenOneEveryInterval) {
  Schedule s;
  EXPECT_EQ(s.Due(kHourNs), s.cycle) << "at start";
  std::vector<Task>& queue = s.queue.Due(kHourNs, [](const ProbeKind&) { return false; });
  queue.clear();  // all ran
  EXPECT_EQ(s.Due(kHourNs + 5 * kHourNs), 0u);
  EXPECT_EQ(s.Due(kHourNs + 6 * kHourNs), s.cycle) << "6h after the last cycle began";
}

TEST(OwnSchedule, CyclesBackToBackWhileTheBaselineRecords) {
  Schedule s;
  s.queue.Due(0, [](const ProbeKind&) { return true; }).clear();
  EXPECT_EQ(s.Due(1, /*recording=*/true), s.cycle);
}

TEST(OwnSchedule, ACycleUnderWayFinishesBeforeTheNext) {
  Schedule s;
  std::vector<Task>& queue = s.queue.Due(0, [](const ProbeKind&) { return false; });
  queue.erase(queue.begin(), queue.begin() + 2);  // two ran; the budget held the rest
  EXPECT_EQ(s.Due(7 * kHourNs), s.cycle - 2) << "the rest, not a new cycle on top";
}

TEST(OwnSchedule, AReplanMidCycleRunsTheNewPlanAtOnce) {
  Schedule s;
  std::vector<Task>& queue = s.queue.Due(0, [](const ProbeKind&) { return false; });
  queue.erase(queue.begin());  // one ran, then a cpuset change replans
  s.queue.Adopt(OwnScheduleTasks(s.plan, s.config, s.topology), s.config);
  EXPECT_EQ(s.Due(1), s.cycle) << "the whole new plan, not 6h later";
  // A finished cycle keeps its interval across a replan.
  s.queue.Due(1, [](const ProbeKind&) { return false; }).clear();
  s.queue.Adopt(OwnScheduleTasks(s.plan, s.config, s.topology), s.config);
  EXPECT_EQ(s.Due(2), 0u);
}

TEST(OwnSchedule, SkippedRunsAreTriedAgainAtTheNextRound) {
  Schedule s;
  std::vector<Task>& queue = s.queue.Due(0, [](const ProbeKind&) { return false; });
  const Task skipped = queue.front();
  s.queue.Skipped(skipped);
  queue.clear();
  std::vector<Task>& next = s.queue.Due(1, [](const ProbeKind&) { return false; });
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next.front().target, skipped.target);
}

TEST(OwnSchedule, ItsBudgetIsItsOwn) {
  Schedule s;
  s.config.probes.Of<PeakBandwidthConfig>().duty_cycle = 0.05;
  s.queue.Adopt(OwnScheduleTasks(s.plan, s.config, s.topology), s.config);
  DutyBudget& budget = s.queue.Budget(PeakBandwidthProbe());
  EXPECT_DOUBLE_EQ(budget.ratio(), 0.05);
  budget.Charge(0, 1'000'000'000, 1.0);
  EXPECT_EQ(budget.next_allowed_ns(), 21'000'000'000) << "1 CPU-s / 0.05 after its end";
  // A replan keeps what the budget owes and when the cycle began.
  s.queue.Due(0, [](const ProbeKind&) { return false; }).clear();
  s.queue.Adopt(OwnScheduleTasks(s.plan, s.config, s.topology), s.config);
  EXPECT_EQ(s.queue.Budget(PeakBandwidthProbe()).next_allowed_ns(), 21'000'000'000);
  EXPECT_EQ(s.Due(kHourNs), 0u);
}

}  // namespace
}  // namespace numaprobe::daemon
