// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/rotation.cc and RoundTasks' visit order: the
// structure of rounds on 1- to 16-node topologies (synthetic ones without
// firmware distances, and the 2-socket NPS2 + CXL fixture with them).
#include "daemon/serve/rotation.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/kinds/kinds.h"
#include "tests/daemon/topology_fixture.h"

namespace numaprobe::daemon {
namespace {

kernels::Topology Nodes(int n) {
  auto topology =
      kernels::Topology::FromSynthetic("pack:" + std::to_string(n) + " [numa(memory=1GiB)] core:2 pu:1", {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  return std::move(topology).value();
}

// The full round of `config` (default: the default config) on `topology`.
std::vector<Task> FullRound(const kernels::Topology& topology, const Config& config = Config{}) {
  auto plan = BuildPlan(PlanOptions{}, topology);
  EXPECT_TRUE(plan.ok()) << plan.failure().reason;
  return RoundTasks(plan.value(), config, topology);
}

// How many times a new visit starts (buffers prepared) in `tasks`.
int Visits(const std::vector<Task>& tasks) {
  int visits = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) visits += i == 0 || !SharesBuffers(tasks[i - 1], tasks[i]);
  return visits;
}

std::string Key(const Task& t) {
  return std::string(t.kind->name()) + " " + std::to_string(t.target.pair.cpu) + ">" +
         std::to_string(t.target.pair.mem_node) + " " + t.target.variant + " peer " + std::to_string(t.target.peer_cpu);
}

TEST(RoundTasks, PairsOfEveryCpuNodeOnOneMemoryNodeAreOneVisit) {
  const kernels::Topology topology = Nodes(8);
  Config config;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  auto plan = BuildPlan(PlanOptions{}, topology);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan.value().memory_pairs.size(), 64u);
  const auto tasks = RoundTasks(plan.value(), config, topology);
  ASSERT_EQ(tasks.size(), 64u + 64u * 3);
  // One buffer per memory node and kind, not one per pair: 8 + 8.
  EXPECT_EQ(Visits(tasks), 16);
  for (std::size_t i = 1; i < tasks.size(); ++i) {
    if (tasks[i - 1].kind == tasks[i].kind) {
      EXPECT_LE(tasks[i - 1].target.pair.mem_node, tasks[i].target.pair.mem_node);
    }
  }
}

TEST(RoundTasks, ConfirmationsAreTheNextVisitOfTheirOwn) {
  const kernels::Topology topology = Nodes(2);
  Config config;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  auto tasks = FullRound(topology, config);
  // Latency: pairs 0>0 and 1>0 (memory node 0, one visit), then 0>1 and 1>1.
  const std::size_t visits = static_cast<std::size_t>(Visits(tasks));
  const Task suspicious = tasks[0];  // the first of its visit's two tasks
  QueueConfirmations(tasks, 0, 4);
  ASSERT_EQ(tasks.size(), FullRound(topology, config).size() + 4);
  EXPECT_FALSE(tasks[1].confirmation) << "the visit in progress keeps its buffers and goes on";
  EXPECT_EQ(tasks[1].target.pair.mem_node, suspicious.target.pair.mem_node);
  for (std::size_t i = 2; i < 6; ++i) {
    EXPECT_TRUE(tasks[i].confirmation);
    EXPECT_EQ(Key(tasks[i]), Key(suspicious));
  }
  EXPECT_FALSE(tasks[6].confirmation);
  // Each confirmation is a visit of its own: after the budget's pause.
  EXPECT_EQ(static_cast<std::size_t>(Visits(tasks)), visits + 4);
  EXPECT_FALSE(SharesBuffers(tasks[1], tasks[2]));
  EXPECT_FALSE(SharesBuffers(tasks[2], tasks[3]));
  // At the end of the round they are simply its last visit.
  const std::size_t last = tasks.size() - 1;
  QueueConfirmations(tasks, last, 2);
  EXPECT_TRUE(tasks[last + 1].confirmation && tasks[last + 2].confirmation);
}

TEST(RoundTasks, FollowUpsRetryADisturbedFirstAttemptOnceAndQueueConfirmations) {
  const kernels::Topology topology = Nodes(2);
  const std::vector<Task> round = FullRound(topology);
  auto tasks = round;
  QueueFollowUps(tasks, 1, kernels::Outcome::kOk, 0);
  QueueFollowUps(tasks, 1, kernels::Outcome::kSkipped, 0);
  EXPECT_EQ(tasks.size(), round.size()) << "an ok or skipped run calls for nothing more";

  QueueFollowUps(tasks, 1, kernels::Outcome::kDisturbed, 0);
  ASSERT_EQ(tasks.size(), round.size() + 1);
  EXPECT_EQ(Key(tasks.back()), Key(round[1])) << "retried at the end of the round";
  EXPECT_EQ(tasks.back().attempt, 1);
  QueueFollowUps(tasks, tasks.size() - 1, kernels::Outcome::kDisturbed, 0);
  EXPECT_EQ(tasks.size(), round.size() + 1) << "a retry is not retried again";

  auto confirmed = round;
  QueueFollowUps(confirmed, 0, kernels::Outcome::kOk, 3);
  auto expected = round;
  QueueConfirmations(expected, 0, 3);
  ASSERT_EQ(confirmed.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Key(confirmed[i]), Key(expected[i]));
    EXPECT_EQ(confirmed[i].confirmation, expected[i].confirmation);
  }
}

TEST(Rotation, OneNodeHasNothingToRotate) {
  const kernels::Topology topology = Nodes(1);
  const Rotation rotation = SplitRound(FullRound(topology), topology);
  ASSERT_EQ(rotation.tasks.size(), 1u + 3u + 1u);  // latency, 3 bandwidth ops, the two cores' core-to-core
  EXPECT_EQ(rotation.every_round.size(), rotation.tasks.size());
  EXPECT_TRUE(rotation.rotated.empty());
  TaskCostEstimate costs;
  for (const Task& t : rotation.tasks) costs.Observe(t.kind, 10.0, true);
  EXPECT_EQ(RotationRounds(rotation, costs, 0.001), 1) << "nothing to rotate: a tiny budget stretches the round";
}

// Without firmware distances a pair is local or remote: per memory kind one
// local and one remote representative (with all bandwidth ops), whatever the
// number of nodes; every other task rotates, each exactly once a cycle.
class RotationOnNodes : public ::testing::TestWithParam<int> {};

TEST_P(RotationOnNodes, OneRepresentativePerClassAndEveryTaskOnceACycle) {
  const int n = GetParam();
  const kernels::Topology topology = Nodes(n);
  const std::vector<Task> full = FullRound(topology);
  ASSERT_GE(full.size(), static_cast<std::size_t>(4 * n * n));  // latency and 3 bandwidth ops per pair
  const Rotation rotation = SplitRound(full, topology);

  std::map<std::string, int> reps;  // kind -> representative tasks
  for (std::size_t i : rotation.every_round) ++reps[std::string(rotation.tasks[i].kind->name())];
  EXPECT_EQ(reps["latency"], 2);
  EXPECT_EQ(reps["bandwidth"], 2 * 3);
  EXPECT_EQ(rotation.every_round.size() + rotation.rotated_tasks(), full.size());
  for (const auto& visit : rotation.rotated) {  // whole visits: one kind, one memory node
    for (std::size_t i : visit) EXPECT_TRUE(SharesBuffers(rotation.tasks[visit[0]], rotation.tasks[i]));
  }

  for (int rounds : {1, 2, 3, static_cast<int>(rotation.rotated.size())}) {
    if (rounds < 1) continue;
    std::map<std::string, int> runs;
    for (int r = 0; r < rounds; ++r) {
      const std::vector<Task> round = RoundOfCycle(rotation, rounds, r);
      // Still grouped for visits: within a kind, memory nodes ascend.
      for (std::size_t i = 1; i < round.size(); ++i) {
        if (round[i - 1].kind == round[i].kind) {
          EXPECT_LE(round[i - 1].target.pair.mem_node, round[i].target.pair.mem_node);
        }
      }
      for (const Task& t : round) ++runs[Key(t)];
    }
    for (std::size_t i = 0; i < full.size(); ++i) {
      const bool rep =
          std::find(rotation.every_round.begin(), rotation.every_round.end(), i) != rotation.every_round.end();
      EXPECT_EQ(runs[Key(full[i])], rep ? rounds : 1) << Key(full[i]) << " with " << rounds << " rounds";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Nodes, RotationOnNodes, ::testing::Values(2, 4, 8, 16));

// With a SLIT, classes are node distances: from the fixture's CPU nodes the
// memory nodes are at 10 (local), 12 (same socket), 32 (other socket), and
// 20 or 40 (the CXL node): five representatives per memory kind.
TEST(Rotation, ClassesFollowFirmwareDistances) {
  const kernels::Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  const Rotation rotation = SplitRound(FullRound(topology), topology);
  std::set<int> distances;
  for (std::size_t i : rotation.every_round) {
    const Task& t = rotation.tasks[i];
    if (t.kind == &LatencyProbe()) {
      EXPECT_TRUE(distances.insert(topology.Distance(t.target.pair.cpu_node, t.target.pair.mem_node)).second)
          << "two latency representatives at one distance";
    }
  }
  EXPECT_EQ(distances, (std::set<int>{10, 12, 20, 32, 40}));
}

// Every memory node a round visits costs a buffer preparation: each kind's
// representatives cover its classes from as few memory nodes as possible.
// On the fixture node 0 is at 10, 12 and 32 from the CPU nodes and the CXL
// node at 20 and 40: two memory nodes, not one per class.
TEST(Rotation, RepresentativesShareAsFewMemoryNodesAsCoverTheClasses) {
  const kernels::Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  const Rotation rotation = SplitRound(FullRound(topology), topology);
  std::map<std::string, std::set<int>> nodes;
  for (std::size_t i : rotation.every_round) {
    const Task& t = rotation.tasks[i];
    if (t.kind != &CoreToCoreProbe()) nodes[std::string(t.kind->name())].insert(t.target.pair.mem_node);
  }
  EXPECT_EQ(nodes["latency"], (std::set<int>{0, 4}));
  EXPECT_EQ(nodes["bandwidth"], (std::set<int>{0, 4}));
  // On 8 glueless nodes without a SLIT (local and remote only): one node.
  const kernels::Topology eight = Nodes(8);
  const Rotation flat = SplitRound(FullRound(eight), eight);
  std::set<int> flat_nodes;
  for (std::size_t i : flat.every_round) {
    if (flat.tasks[i].kind == &LatencyProbe()) flat_nodes.insert(flat.tasks[i].target.pair.mem_node);
  }
  EXPECT_EQ(flat_nodes.size(), 1u);
}

TEST(RotationRounds, FromMeasuredCostsVisitsAndTheBudgetOfOneInterval) {
  const kernels::Topology topology = Nodes(8);
  Config config;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  const Rotation rotation = SplitRound(FullRound(topology, config), topology);
  // Representatives (0,0) and (1,0), on node 0: one latency visit of 2 tasks,
  // one bandwidth visit of 2 pairs x 3 ops.
  ASSERT_EQ(rotation.every_round.size(), 2u + 2u * 3);
  // Rotated in whole visits: per kind, node 0's other 6 pairs and the 8 pairs of each other node.
  ASSERT_EQ(rotation.rotated.size(), 8u + 8u);

  TaskCostEstimate costs;
  EXPECT_EQ(RotationRounds(rotation, costs, 0.6), 1) << "costs unknown: the first cycle runs everything once";
  costs.Observe(&LatencyProbe(), 0.045, /*starts_visit=*/true);
  costs.Observe(&LatencyProbe(), 0.025, false);
  costs.Observe(&BandwidthProbe(), 0.25, true);  // a 256 MiB buffer prepared, then one op
  costs.Observe(&BandwidthProbe(), 0.02, false);
  // Full round: latency 8 x 0.045 + 56 x 0.025 = 1.76 s, bandwidth 8 x 0.25 + 184 x 0.02 = 5.68 s: 7.44 s.
  // Representatives: 0.045 + 0.025 + 0.25 + 5 x 0.02 = 0.42 s. Rotated visits: 7.27 s.
  EXPECT_EQ(RotationRounds(rotation, costs, 4.0), 1) << "7.44 s <= 2 x 4 s: stretching the round costs less";
  // 3 s a round: rounds of up to 2 x 3 s, room 6 - 0.42 = 5.58 s for 7.27 s -> 1.3 -> 2 rounds.
  EXPECT_EQ(RotationRounds(rotation, costs, 3.0), 2);
  // 0.6 s a round (0.2% of a CPU x 300 s): room 1.2 - 0.42 = 0.78 s for 7.27 s -> 9.3 -> 10 rounds,
  // each lasting about 2 intervals.
  EXPECT_EQ(RotationRounds(rotation, costs, 0.6), 10);
  // Representatives above 2 budgets: still one budget per round for the rotated visits: 7.27 / 0.2 -> 16.
  EXPECT_EQ(RotationRounds(rotation, costs, 0.2), 16) << "at most one visit a round";
  // Smoothed, not replaced: bandwidth visits 0.7 x 0.25 + 0.3 x 0.05 = 0.19 s; full 6.96 s > 2 x 3 s;
  // representatives 0.36 s, room 5.64 s for 6.79 s -> 1.2 -> 2 rounds.
  costs.Observe(&BandwidthProbe(), 0.05, true);
  EXPECT_EQ(RotationRounds(rotation, costs, 3.0), 2);
  EXPECT_EQ(RotationRounds(rotation, costs, 3.5), 1) << "6.96 s <= 7 s";
}

}  // namespace
}  // namespace numaprobe::daemon
