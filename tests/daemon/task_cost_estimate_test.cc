// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/task_cost_estimate.cc: learning, fixing and the
// JSON form the state file, `numaprobe topology --task-costs` and the
// NUMAPROBE_TEST_TASK_COSTS hook share.
#include "daemon/serve/task_cost_estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/probing/kinds/kinds.h"

namespace numaprobe::daemon {
namespace {

using testing::HasSubstr;

std::vector<Task> OneVisitOfTwo(const ProbeKind& kind) {
  MemoryPair a{0, 0, 1, false};
  MemoryPair b{2, 1, 1, false};
  return {Task{&kind, MemoryTarget(a)}, Task{&kind, MemoryTarget(b)}};
}

TEST(TaskCostEstimate, LearnsAVisitsFirstTaskAndItsContinuationApart) {
  TaskCostEstimate costs;
  const auto tasks = OneVisitOfTwo(LatencyProbe());
  EXPECT_FALSE(costs.Of(tasks, {0, 1})) << "never run: not known";
  EXPECT_FALSE(costs.Knows(tasks));
  costs.Observe(&LatencyProbe(), 0.04, /*starts_visit=*/true);
  EXPECT_TRUE(costs.Knows(tasks));
  EXPECT_DOUBLE_EQ(*costs.Of(tasks, {0, 1}), 0.08) << "no continuation seen: costed like a first task";
  costs.Observe(&LatencyProbe(), 0.02, false);
  EXPECT_DOUBLE_EQ(*costs.Of(tasks, {0, 1}), 0.06);
  costs.Observe(&LatencyProbe(), 0.14, true);  // smoothed: 0.7 x 0.04 + 0.3 x 0.14
  EXPECT_NEAR(*costs.Of(tasks, {0}), 0.07, 1e-12);
}

TEST(TaskCostEstimate, AFixedEstimateLearnsNothing) {
  TaskCostEstimate costs;
  ASSERT_EQ(TaskCostEstimate::Parse(R"({"latency": {"visit_start": 0.5, "continuation": 0.25}})", "costs.json", costs),
            "");
  costs.Fix();
  costs.Observe(&LatencyProbe(), 0.001, true);
  costs.Observe(&LatencyProbe(), 0.001, false);
  EXPECT_DOUBLE_EQ(*costs.Of(OneVisitOfTwo(LatencyProbe()), {0, 1}), 0.75);
  EXPECT_FALSE(costs.Knows(OneVisitOfTwo(BandwidthProbe())));
}

TEST(TaskCostEstimate, JsonRoundTrips) {
  TaskCostEstimate costs;
  costs.Observe(&LatencyProbe(), 0.044, true);
  costs.Observe(&LatencyProbe(), 0.025, false);
  costs.Observe(&BandwidthProbe(), 0.214, true);
  const nlohmann::json json = costs.ToJson();
  EXPECT_EQ(json,
            nlohmann::json::parse(
                R"({"latency": {"visit_start": 0.044, "continuation": 0.025}, "bandwidth": {"visit_start": 0.214}})"));
  TaskCostEstimate back;
  ASSERT_EQ(TaskCostEstimate::FromJson(json, back), "");
  EXPECT_EQ(back.ToJson(), json);
}

TEST(TaskCostEstimate, BadTextNamesTheProblem) {
  TaskCostEstimate costs;
  EXPECT_THAT(TaskCostEstimate::Parse("{", "f.json", costs), HasSubstr("f.json: not valid JSON"));
  EXPECT_THAT(TaskCostEstimate::Parse("[]", "f.json", costs), HasSubstr("expected an object by probe kind"));
  EXPECT_THAT(TaskCostEstimate::Parse(R"({"chase": {"visit_start": 1}})", "f.json", costs),
              HasSubstr("unknown probe kind \"chase\""));
  EXPECT_THAT(TaskCostEstimate::Parse(R"({"latency": {"visit_start": -1}})", "f.json", costs),
              HasSubstr("task costs.latency.visit_start: expected CPU seconds"));
  EXPECT_THAT(TaskCostEstimate::Parse(R"({"latency": {"continuation": 0.1}})", "f.json", costs),
              HasSubstr("task costs.latency: visit_start missing"));
  EXPECT_THAT(TaskCostEstimate::Parse(R"({"latency": {"visit_start": 0.1, "setup": 1}})", "f.json", costs),
              HasSubstr("task costs.latency.setup: unknown key"));
}

}  // namespace
}  // namespace numaprobe::daemon
