// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/refresh_interval.cc: how often each series is
// said to be refreshed after a round, rotating or not.
#include "daemon/serve/refresh_interval.h"

#include <gtest/gtest.h>

#include <string>

#include "daemon/probing/plan.h"

namespace numaprobe::daemon {
namespace {

Rotation RotationOn(int nodes) {
  auto topology =
      kernels::Topology::FromSynthetic("pack:" + std::to_string(nodes) + " [numa(memory=1GiB)] core:2 pu:1", {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  auto plan = BuildPlan(PlanOptions{}, topology.value());
  EXPECT_TRUE(plan.ok()) << plan.failure().reason;
  return SplitRound(RoundTasks(plan.value(), Config{}, topology.value()), topology.value());
}

TEST(RefreshAfterRound, RepresentativesEveryRoundTheRestOnceACycle) {
  const Rotation rotation = RotationOn(4);
  ASSERT_FALSE(rotation.rotated.empty());
  Config config;
  config.schedule.interval = std::chrono::seconds(300);
  const RefreshOf refresh = RefreshAfterRound(rotation, 3, 40, config, {{"peak_bandwidth", 86400}});
  EXPECT_DOUBLE_EQ(refresh.every_round_seconds, 300) << "a round shorter than the interval counts as one interval";
  EXPECT_DOUBLE_EQ(refresh.cycle_seconds, 900);
  EXPECT_FALSE(refresh.every_round.empty());
  for (std::size_t i : rotation.every_round) {
    const Task& task = rotation.tasks[i];
    if (!task.kind->traits().has_baseline) continue;
    const SeriesKey key = task.kind->SeriesOf(task.target, config.targets.per_cpu);
    EXPECT_TRUE(refresh.every_round.contains(key)) << key.Describe();
    EXPECT_DOUBLE_EQ(refresh.Of(key), 300);
  }
  for (const auto& visit : rotation.rotated) {
    const Task& task = rotation.tasks[visit.front()];
    if (!task.kind->traits().has_baseline) continue;
    EXPECT_DOUBLE_EQ(refresh.Of(task.kind->SeriesOf(task.target, config.targets.per_cpu)), 900);
  }
  SeriesKey own_kind;
  own_kind.probe = "peak_bandwidth";
  EXPECT_DOUBLE_EQ(refresh.Of(own_kind), 86400);
}

TEST(RefreshAfterRound, ARoundThatOverranItsIntervalCountsAsLongAsItTook) {
  Config config;
  config.schedule.interval = std::chrono::seconds(300);
  const RefreshOf refresh = RefreshAfterRound(RotationOn(2), 1, 450, config, {});
  EXPECT_DOUBLE_EQ(refresh.every_round_seconds, 450);
  EXPECT_DOUBLE_EQ(refresh.cycle_seconds, 450);
}

}  // namespace
}  // namespace numaprobe::daemon
