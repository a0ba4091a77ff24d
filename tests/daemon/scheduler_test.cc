// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/scheduler.cc (the parts that do not run probes;
// the loop itself is exercised end to end by tests/integration/test_serve.py)
// and daemon/probing/plan_on_host.cc.
#include "daemon/serve/scheduler.h"

#include <gtest/gtest.h>

#include "daemon/probing/kinds/core_to_core_plan.h"
#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/plan_on_host.h"

namespace numaprobe::daemon {
namespace {

kernels::Topology TwoNodes() {
  auto topology = kernels::Topology::FromSynthetic("pack:2 [numa] core:2 pu:1", {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  return std::move(topology).value();
}

TEST(RoundTasks, OrdersLatencyThenBandwidthPerOpThenCoreToCore) {
  Plan plan;
  plan.memory_pairs = {{1, 0, 0}, {1, 0, 1}};
  const ProbeTarget c2c = C2cTarget({0, 1, 0, kernels::CpuRelation::kSameLlc}, 0);
  plan.kind_targets[std::string(CoreToCoreProbe().name())] = {c2c};
  Config config;
  config.probes.Of<BandwidthConfig>().ops = {kernels::BandwidthOp::kRead, kernels::BandwidthOp::kCopy};
  const auto tasks = RoundTasks(plan, config, TwoNodes());
  ASSERT_EQ(tasks.size(), 2u + 4u + 1u);
  EXPECT_EQ(tasks[0].kind, &LatencyProbe());
  EXPECT_EQ(tasks[1].target.pair.mem_node, 1);
  EXPECT_EQ(tasks[2].kind, &BandwidthProbe());
  EXPECT_EQ(tasks[3].target.variant, "copy");
  EXPECT_EQ(tasks[6].kind, &CoreToCoreProbe());
  EXPECT_EQ(tasks[6].target, c2c) << "the target the kind planned";
}

// The ops of one bandwidth pair share a buffer and run as one visit; nothing
// else does (a new pair, or a new kind, starts a new visit).
TEST(RoundTasks, OnlyTheOpsOfOneBandwidthPairShareBuffers) {
  Plan plan;
  plan.memory_pairs = {{1, 0, 0}, {1, 0, 1}};
  Config config;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  const auto tasks = RoundTasks(plan, config, TwoNodes());
  ASSERT_EQ(tasks.size(), 2u + 6u);  // 2 latency, then read/write/copy for each pair
  EXPECT_FALSE(SharesBuffers(tasks[0], tasks[1])) << "latency pairs on different nodes";
  EXPECT_FALSE(SharesBuffers(tasks[1], tasks[2])) << "latency then bandwidth";
  EXPECT_TRUE(SharesBuffers(tasks[2], tasks[3]));
  EXPECT_TRUE(SharesBuffers(tasks[3], tasks[4]));
  EXPECT_FALSE(SharesBuffers(tasks[4], tasks[5])) << "the next pair's node";
  EXPECT_TRUE(SharesBuffers(tasks[5], tasks[6]));
}

TEST(RoundTasks, DisabledProbesAreLeftOut) {
  Plan plan;
  plan.memory_pairs = {{1, 0, 0}};
  plan.kind_targets[std::string(CoreToCoreProbe().name())] = {C2cTarget({0, 1, 0, kernels::CpuRelation::kSameLlc}, 0)};
  Config config;
  config.probes.Of<LatencyConfig>().enabled = false;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  const auto tasks = RoundTasks(plan, config, TwoNodes());
  ASSERT_EQ(tasks.size(), 3u);
  for (const auto& t : tasks) EXPECT_EQ(t.kind, &BandwidthProbe());
}

TEST(PlanOnHost, RejectsACpuThatDoesNotExist) {
  Config config;
  config.targets.cpus = {4095};
  auto plan = PlanOnHost(config);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.failure().reason.find("4095"), std::string::npos) << plan.failure().reason;
}

TEST(PlanOnHost, DefaultConfigPlansTheLocalPair) {
  auto plan = PlanOnHost(Config{});
  ASSERT_TRUE(plan.ok()) << plan.failure().reason;
  EXPECT_FALSE(plan.value().memory_pairs.empty());
}

}  // namespace
}  // namespace numaprobe::daemon
