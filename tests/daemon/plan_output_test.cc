// SPDX-License-Identifier: Apache-2.0
// Unit tests for the plan in `numaprobe topology`'s outputs
// (output/json_report.cc, output/table_report.cc): the memory pairs, then each
// kind's own targets as the kind shows them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "daemon/output/json_report.h"
#include "daemon/output/table_report.h"
#include "daemon/probing/plan.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using ::testing::HasSubstr;

// Two nodes with memory and no caches, of two single-thread cores each: CPUs
// 0-1 on node 0, 2-3 on node 1.
constexpr const char* kTwoByTwo = "pack:2 [numa(memory=1GiB)] core:2 pu:1";

k::Topology TwoByTwoTopology() {
  auto topology = k::Topology::FromSynthetic(kTwoByTwo, {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  return std::move(topology).value();
}

Plan PlanWithPairCpus(const k::Topology& topology, std::vector<int> cpus) {
  PlanOptions options;
  options.cpus = {1};
  options.mem_nodes = {1};
  options.SetKindCpus("c2c_cpus", std::move(cpus));
  auto plan = BuildPlan(options, topology);
  EXPECT_TRUE(plan.ok()) << plan.failure().reason;
  return std::move(plan).value();
}

// tests/vm and bench/ read "c2c_pairs" with these fields.
TEST(PlanOutput, JsonKeepsTheCoreToCorePairsUnderC2cPairs) {
  const k::Topology topology = TwoByTwoTopology();
  const nlohmann::json plan = TopologyToJson(topology, PlanWithPairCpus(topology, {3, 1})).at("plan");
  EXPECT_EQ(plan.at("memory_pairs"), nlohmann::json::parse(R"([{"cpu": 1, "cpu_node": 0, "mem_node": 1}])"));
  EXPECT_EQ(plan.at("c2c_pairs"),
            nlohmann::json::parse(R"([{"cpu_a": 1, "cpu_b": 3, "line_node": 0, "relation": "cross_node"}])"));
  EXPECT_EQ(plan.size(), 3u) << plan.dump();  // memory_pairs, c2c_pairs, notes

  // One allowed CPU: no pairs, and still the key.
  k::Restriction one;
  one.cpus = std::set<int>{2};
  auto single = k::Topology::FromSynthetic(kTwoByTwo, one);
  ASSERT_TRUE(single.ok()) << single.failure().reason;
  auto lone = BuildPlan(PlanOptions{}, single.value());
  ASSERT_TRUE(lone.ok()) << lone.failure().reason;
  EXPECT_EQ(TopologyToJson(single.value(), lone.value()).at("plan").at("c2c_pairs"), nlohmann::json::array());
}

TEST(PlanOutput, TableListsTheCoreToCorePairs) {
  const k::Topology topology = TwoByTwoTopology();
  const std::string text = FormatTopology(topology, PlanWithPairCpus(topology, {0, 1, 2}));
  EXPECT_THAT(text, HasSubstr("\n  memory pairs (cpu -> node): 1->1\n"));
  EXPECT_THAT(text, HasSubstr("\n  core-to-core pairs: 0<->1 (same_node, line on node 0) "
                              "0<->2 (cross_node, line on node 0) 1<->2 (cross_node, line on node 0)\n"));
}

}  // namespace
}  // namespace numaprobe::daemon
