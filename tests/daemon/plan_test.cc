// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/probing/plan.cc and the core-to-core kind's own
// planning (probing/kinds/core_to_core_plan.cc), on the hwloc XML fixtures
// described in tests/fixtures/topology/README.md.
#include "daemon/probing/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "daemon/probing/kinds/core_to_core_plan.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/probe_settings.h"
#include "tests/daemon/topology_fixture.h"

namespace numaprobe::daemon {
namespace {

using kernels::CpuRelation;
using kernels::Outcome;
using kernels::Restriction;
using kernels::Topology;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Designated initializers would trip -Wmissing-field-initializers.
PlanOptions WithCpus(std::vector<int> cpus) {
  PlanOptions options;
  options.cpus = std::move(cpus);
  return options;
}
PlanOptions WithMemNodes(std::vector<int> mem_nodes) {
  PlanOptions options;
  options.mem_nodes = std::move(mem_nodes);
  return options;
}
// The core-to-core kind's own target option, as the configuration sets it.
PlanOptions WithC2cCpus(std::vector<int> c2c_cpus) {
  PlanOptions options;
  options.SetKindCpus("c2c_cpus", std::move(c2c_cpus));
  return options;
}

// The pairs the core-to-core kind planned.
std::vector<C2cPair> PlannedC2cPairs(const Plan& plan) {
  std::vector<C2cPair> pairs;
  for (const ProbeTarget& target : plan.TargetsOf(CoreToCoreProbe().name())) pairs.push_back(C2cPairOf(target));
  return pairs;
}

Plan Build(const PlanOptions& options, const Topology& topology) {
  auto plan = BuildPlan(options, topology);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.failure().reason);
  return plan.ok() ? std::move(plan).value() : Plan{};
}

void ExpectFailure(const PlanOptions& options, const Topology& topology, Outcome outcome, const std::string& reason) {
  auto plan = BuildPlan(options, topology);
  ASSERT_FALSE(plan.ok()) << reason;
  EXPECT_EQ(plan.failure().outcome, outcome);
  EXPECT_EQ(plan.failure().reason, reason);
}

TEST(PlanTest, RepresentativeIsTheHighestCpu) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  EXPECT_EQ(RepresentativeCpu(*topology.FindNode(0)), 7);
  EXPECT_EQ(RepresentativeCpu(*topology.FindNode(3)), 31);
  EXPECT_EQ(RepresentativeCpu(*topology.FindNode(4)), -1);  // CPU-less
}

TEST(PlanTest, DefaultPlanMeasuresEveryNodeFromEachCpuNode) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  const Plan plan = Build({}, topology);
  ASSERT_EQ(plan.memory_pairs.size(), 20u);  // 4 CPU nodes x 5 memory nodes
  EXPECT_EQ(plan.memory_pairs.front(), (MemoryPair{7, 0, 0, true}));
  EXPECT_EQ(plan.memory_pairs.back(), (MemoryPair{31, 3, 4, true}));
  EXPECT_TRUE(std::is_sorted(plan.memory_pairs.begin(), plan.memory_pairs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.cpu_node, a.mem_node, a.cpu) < std::tie(b.cpu_node, b.mem_node, b.cpu);
  }));
  for (int cpu_node = 0; cpu_node < 4; ++cpu_node) {
    EXPECT_THAT(plan.memory_pairs, Contains(MemoryPair{8 * cpu_node + 7, cpu_node, 4, true}));
  }
  for (const MemoryPair& pair : plan.memory_pairs) {
    EXPECT_NE(pair.cpu_node, 4);
    EXPECT_EQ(pair.cpu, RepresentativeCpu(*topology.FindNode(pair.cpu_node)));
    EXPECT_TRUE(pair.any_cpu_of_node) << "the plan picked the CPU: a probe may use an idler one of the node";
  }
  EXPECT_THAT(plan.notes, Contains("node 4: no CPUs (memory only): measured from the other nodes' CPUs"));
}

TEST(PlanTest, DefaultC2cPlanHasOnePairPerClassAndBothHomesAcrossNodes) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  const Plan plan = Build({}, topology);
  const std::vector<C2cPair> c2c_pairs = PlannedC2cPairs(plan);
  std::vector<C2cPair> cross;
  std::map<CpuRelation, int> per_class;
  for (const C2cPair& pair : c2c_pairs) {
    ++per_class[pair.relation];
    EXPECT_EQ(topology.Relation(pair.cpu_a, pair.cpu_b), pair.relation);
    if (pair.relation == CpuRelation::kCrossNode) cross.push_back(pair);
  }
  EXPECT_EQ(per_class[CpuRelation::kSmt], 1);
  EXPECT_EQ(per_class[CpuRelation::kSameLlc], 1);
  EXPECT_EQ(per_class[CpuRelation::kSameNode], 1);
  EXPECT_THAT(c2c_pairs, Contains(C2cPair{30, 31, 3, CpuRelation::kSmt}));
  EXPECT_THAT(c2c_pairs, Contains(C2cPair{29, 31, 3, CpuRelation::kSameLlc}));
  EXPECT_THAT(c2c_pairs, Contains(C2cPair{27, 31, 3, CpuRelation::kSameNode}));
  ASSERT_EQ(cross.size(), 12u);  // 6 node pairs x line on each side
  for (int na = 0; na < 4; ++na) {
    for (int nb = na + 1; nb < 4; ++nb) {
      const int a = 8 * na + 7;
      const int b = 8 * nb + 7;
      EXPECT_THAT(cross, Contains(C2cPair{a, b, na, CpuRelation::kCrossNode}));
      EXPECT_THAT(cross, Contains(C2cPair{a, b, nb, CpuRelation::kCrossNode}));
    }
  }
}

TEST(PlanTest, RestrictionKeepsThePlanInsideTheAllowedSets) {
  Restriction restriction;
  restriction.cpus = std::set<int>{0, 1, 2, 3, 4, 5, 6, 7};
  restriction.mem_nodes = std::set<int>{0};
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml", restriction);
  const Plan plan = Build({}, topology);
  EXPECT_THAT(plan.memory_pairs, ElementsAre(MemoryPair{7, 0, 0, true}));
  EXPECT_THAT(PlannedC2cPairs(plan),
              ElementsAre(C2cPair{6, 7, 0, CpuRelation::kSmt}, C2cPair{5, 7, 0, CpuRelation::kSameLlc},
                          C2cPair{3, 7, 0, CpuRelation::kSameNode}));
  EXPECT_THAT(plan.notes, Contains("cpus 8-31 not allowed (affinity/cpuset) or offline"));
  EXPECT_THAT(plan.notes, Contains("nodes 1-4 not allowed (cpuset.mems)"));
  EXPECT_THAT(plan.notes, Contains("c2c classes without an allowed CPU pair: cross_node"));

  ExpectFailure(WithMemNodes({1}), topology, Outcome::kNotAllowed,
                "node 1 is not in this process's allowed memory nodes (cpuset.mems)");
  ExpectFailure(WithCpus({12}), topology, Outcome::kNotAllowed,
                "cpu 12 is not in this process's affinity mask or is offline");
  ExpectFailure(WithC2cCpus({0, 12}), topology, Outcome::kNotAllowed,
                "cpu 12 is not in this process's affinity mask or is offline");
}

TEST(PlanTest, PerCpuAndExplicitLists) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  PlanOptions per_cpu;
  per_cpu.per_cpu = true;
  const Plan every_cpu = Build(per_cpu, topology);
  EXPECT_EQ(every_cpu.memory_pairs.size(), 32u * 5u);
  // Named CPUs are measured from as named, never moved to an idler one.
  for (const MemoryPair& pair : every_cpu.memory_pairs) EXPECT_FALSE(pair.any_cpu_of_node);

  PlanOptions lists = WithCpus({17, 3, 3});
  lists.mem_nodes = {4, 0};
  const Plan plan = Build(lists, topology);
  EXPECT_THAT(plan.memory_pairs,
              ElementsAre(MemoryPair{3, 0, 0}, MemoryPair{3, 0, 4}, MemoryPair{17, 2, 0}, MemoryPair{17, 2, 4}));

  const Plan c2c = Build(WithC2cCpus({16, 0, 1}), topology);
  EXPECT_THAT(PlannedC2cPairs(c2c),
              ElementsAre(C2cPair{0, 1, 0, CpuRelation::kSmt}, C2cPair{0, 16, 0, CpuRelation::kCrossNode},
                          C2cPair{1, 16, 0, CpuRelation::kCrossNode}));
}

// The core-to-core kind plans its targets itself: the pairs as ProbeTargets
// keyed by cpu_a's node and the line's node, and nothing for the memory kinds.
TEST(PlanTest, ExplicitC2cCpusArePlannedByTheirKind) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  const Plan plan = Build(WithC2cCpus({17, 9, 0, 9}), topology);
  ASSERT_EQ(plan.kind_targets.size(), 1u);
  const std::vector<ProbeTarget>& targets = plan.TargetsOf(CoreToCoreProbe().name());
  ASSERT_EQ(targets.size(), 3u);  // every pair of {0, 9, 17}, the line on cpu_a's node
  EXPECT_EQ(targets[0], C2cTarget({0, 9, 0, CpuRelation::kCrossNode}, 0));
  EXPECT_EQ(targets[1], C2cTarget({0, 17, 0, CpuRelation::kCrossNode}, 0));
  EXPECT_EQ(targets[2], C2cTarget({9, 17, 1, CpuRelation::kCrossNode}, 1));
  EXPECT_EQ(targets[2].pair.cpu, 9);
  EXPECT_EQ(targets[2].peer_cpu, 17);
  EXPECT_EQ(targets[2].pair.cpu_node, 1);
  // The kind's Targets are what it planned; the memory pairs are untouched.
  EXPECT_EQ(CoreToCoreProbe().Targets(plan, ProbeSettings{}, topology), targets);
  EXPECT_EQ(plan.memory_pairs, Build({}, topology).memory_pairs);
}

TEST(PlanTest, C2cCpusThatAreNoAllowedCpuFailTheWholePlanNamingTheCpu) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  ExpectFailure(WithC2cCpus({0, 40}), topology, Outcome::kInvalidSpec,
                "cpu 40 does not exist (this machine has CPUs 0-31)");
  ExpectFailure(WithC2cCpus({5, 5}), topology, Outcome::kInvalidSpec, "c2c needs at least two distinct CPUs");
}

TEST(PlanTest, UnknownCpusAndNodesAreRejected) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  ExpectFailure(WithCpus({40}), topology, Outcome::kInvalidSpec, "cpu 40 does not exist (this machine has CPUs 0-31)");
  ExpectFailure(WithMemNodes({9}), topology, Outcome::kInvalidSpec, "node 9 does not exist");
  ExpectFailure(WithC2cCpus({3}), topology, Outcome::kInvalidSpec, "c2c needs at least two distinct CPUs");
}

TEST(PlanTest, MemorylessOfflineAndCgroupRestrictedMachine) {
  const Topology topology = TopologyFixture("3node_memoryless_cgroup.xml");
  ExpectFailure(WithMemNodes({1}), topology, Outcome::kInvalidSpec, "node 1 has no memory");
  ExpectFailure(WithMemNodes({2}), topology, Outcome::kNotAllowed,
                "node 2 is not in this process's allowed memory nodes (cpuset.mems)");
  ExpectFailure(WithCpus({6}), topology, Outcome::kNotAllowed,
                "cpu 6 is not in this process's affinity mask or is offline");
  ExpectFailure(WithCpus({7}), topology, Outcome::kInvalidSpec, "cpu 7 does not exist (this machine has CPUs 0-6)");

  const Plan plan = Build({}, topology);
  // CPU 4 sits on node 2, whose memory we may not use, but still measures node 0.
  EXPECT_THAT(plan.memory_pairs,
              ElementsAre(MemoryPair{1, 0, 0, true}, MemoryPair{3, 1, 0, true}, MemoryPair{4, 2, 0, true}));
  EXPECT_THAT(plan.notes, Contains("node 1: no memory: not a memory target"));
  EXPECT_THAT(plan.notes, Contains("cpus 5-6 not allowed (affinity/cpuset) or offline"));
  EXPECT_THAT(plan.notes, Contains("node 2 not allowed (cpuset.mems)"));
  // Lines can only live where we may allocate: every home is node 0.
  const std::vector<C2cPair> c2c_pairs = PlannedC2cPairs(plan);
  EXPECT_FALSE(c2c_pairs.empty());
  for (const C2cPair& pair : c2c_pairs) EXPECT_EQ(pair.line_node, 0);
}

TEST(PlanTest, SingleCpuHasNoC2cPairs) {
  Restriction restriction;
  restriction.cpus = std::set<int>{5};
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml", restriction);
  const Plan plan = Build({}, topology);
  EXPECT_THAT(PlannedC2cPairs(plan), IsEmpty());
  EXPECT_THAT(plan.notes, Contains("only one allowed CPU: no core-to-core pairs"));
  EXPECT_EQ(plan.memory_pairs.size(), 5u);
}

}  // namespace
}  // namespace numaprobe::daemon
