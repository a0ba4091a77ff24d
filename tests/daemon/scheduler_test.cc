// Unit tests for daemon/scheduler.cc (the parts that do not run probes; the
// loop itself is exercised end to end by tests/integration/test_serve.py).
#include "daemon/serve/scheduler.h"

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

TEST(RoundTasks, OrdersLatencyThenBandwidthPerOpThenC2c) {
  Plan plan;
  plan.memory_pairs = {{1, 0, 0}, {1, 0, 1}};
  plan.c2c_pairs = {{0, 1, 0, kernels::CpuRelation::kSameLlc}};
  Config config;
  config.bandwidth.ops = {kernels::BandwidthOp::kRead, kernels::BandwidthOp::kCopy};
  const auto tasks = RoundTasks(plan, config);
  ASSERT_EQ(tasks.size(), 2u + 4u + 1u);
  EXPECT_EQ(tasks[0].kind, Task::Kind::kLatency);
  EXPECT_EQ(tasks[1].pair.mem_node, 1);
  EXPECT_EQ(tasks[2].kind, Task::Kind::kBandwidth);
  EXPECT_EQ(tasks[3].op, kernels::BandwidthOp::kCopy);
  EXPECT_EQ(tasks[6].kind, Task::Kind::kC2c);
}

TEST(RoundTasks, DisabledProbesAreLeftOut) {
  Plan plan;
  plan.memory_pairs = {{1, 0, 0}};
  plan.c2c_pairs = {{0, 1, 0, kernels::CpuRelation::kSameLlc}};
  Config config;
  config.latency.enabled = false;
  config.core_to_core.enabled = false;
  const auto tasks = RoundTasks(plan, config);
  ASSERT_EQ(tasks.size(), 3u);
  for (const auto& t : tasks) EXPECT_EQ(t.kind, Task::Kind::kBandwidth);
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
