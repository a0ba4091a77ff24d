// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/probing/kinds/interleave_bandwidth.cc: what it plans
// (nothing on a one-node host, saying why), when it runs (the peak kind's
// schedule), and how a record reads in the views (figures, JSON, table).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/probing/kinds/interleave_result.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_settings.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const ProbeKind& Kind() { return InterleaveBandwidthProbe(); }

// What AppendFigures hands the exposition: (family, labels) -> value.
class CollectingSink final : public FigureSink {
 public:
  void Add(std::string_view family, const Labels& labels, double value, double /*freshness*/) override {
    values[{std::string(family), labels}] = value;
  }
  std::map<std::tuple<std::string, Labels>, double> values;
};

TEST(InterleaveBandwidthTest, AOneNodeHostPlansNothingAndSaysWhy) {
  auto topology = k::Topology::FromSynthetic("pack:1 [numa(memory=1GiB)] core:2 pu:1", {});
  ASSERT_TRUE(topology.ok()) << topology.failure().reason;
  const auto plan = BuildPlan({}, topology.value());
  ASSERT_TRUE(plan.ok()) << plan.failure().reason;
  EXPECT_THAT(plan->notes, Contains("interleave_bandwidth not planned: 1 memory node: a one-node host has nothing "
                                    "to interleave"));
  EXPECT_TRUE(Kind().Targets(plan.value(), ProbeSettings{}, topology.value()).empty());
  EXPECT_TRUE(plan->TargetsOf(Kind().name()).empty());
}

TEST(InterleaveBandwidthTest, RunsOnThePeakKindsScheduleAndIsOffByDefault) {
  Config config;
  EXPECT_FALSE(Kind().Enabled(config));
  EXPECT_FALSE(Kind().traits().runs_by_default);
  PeakBandwidthConfig& peak = config.probes.Of<PeakBandwidthConfig>();
  peak.interval = std::chrono::hours(3);
  peak.duty_cycle = 0.02;
  const std::optional<OwnSchedule> own = Kind().OwnScheduleOf(config);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->interval, std::chrono::hours(3));
  EXPECT_DOUBLE_EQ(own->duty_cycle, 0.02);
}

// A run from node 0 over nodes 0 and 1 with weights 3:1, against a best
// single node of 80 GB/s.
RecordPtr Interleaved(k::Outcome outcome) {
  InterleaveResult r;
  r.outcome = outcome;
  r.reason = outcome == k::Outcome::kOk ? "" : "weighted interleave: node 1 holds 10 of 64 2MiB units";
  r.cpus = {0, 1};
  r.bytes_per_second.median = 1e11;
  r.weights = {{0, 3}, {1, 1}};
  r.buffer.placement.node_shares = {{0, 0.75}, {1, 0.25}};
  r.best_node = BestNodePeak{0, 8e10};
  return std::make_shared<ProbeRecordOf<InterleaveResult>>(Kind(), MemoryTarget({0, 0, -1}, "read"), std::move(r));
}

TEST(InterleaveBandwidthTest, FiguresArePerCpuNode) {
  CollectingSink sink;
  Kind().AppendFigures({{Interleaved(k::Outcome::kOk), 1700000000}}, FigureContext{}, sink);
  const Labels node0{{"cpu_node", "0"}};
  EXPECT_DOUBLE_EQ(sink.values.at({"numaprobe_memory_interleave_bandwidth_bytes_per_second", node0}), 1e11);
  EXPECT_DOUBLE_EQ(sink.values.at({"numaprobe_memory_interleave_bandwidth_gain_ratio", node0}), 1.25);
  EXPECT_DOUBLE_EQ(sink.values.at(
                       {"numaprobe_memory_interleave_page_share_ratio", Labels{{"cpu_node", "0"}, {"mem_node", "1"}}}),
                   0.25);
  EXPECT_EQ(sink.values.size(), 4u);
}

// The split is in the JSON of every run, so a guest with several nodes can
// be judged from `numaprobe probe --format json` alone; a failed run has no
// figure and names its reason.
TEST(InterleaveBandwidthTest, TheJsonCarriesTheSplitAndNoFigureOnFailure) {
  const nlohmann::json ok = Kind().ToJson(*Interleaved(k::Outcome::kOk));
  EXPECT_EQ(ok.at("weights"), (nlohmann::json{{"0", 3}, {"1", 1}}));
  EXPECT_DOUBLE_EQ(ok.at("page_shares").at("1").get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(ok.at("gain_ratio").get<double>(), 1.25);
  EXPECT_EQ(ok.at("best_node"), 0);
  EXPECT_EQ(ok.at("cpu_node"), 0);
  const nlohmann::json failed = Kind().ToJson(*Interleaved(k::Outcome::kPlacementMismatch));
  EXPECT_TRUE(failed.at("median_bytes_per_second").is_null());
  EXPECT_TRUE(failed.at("gain_ratio").is_null());
  EXPECT_EQ(failed.at("outcome"), "placement_mismatch");
  EXPECT_DOUBLE_EQ(failed.at("page_shares").at("0").get<double>(), 0.75);
}

TEST(InterleaveBandwidthTest, TheTableShowsTheFigureTheRatioAndTheShares) {
  const std::vector<ReportSection> sections = Kind().Sections({Interleaved(k::Outcome::kOk)});
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_THAT(sections[0].columns,
              ElementsAre("GB/s", "best node GB/s", "ratio", "node 0 share (weight)", "node 1 share (weight)"));
  EXPECT_THAT(sections[0].cells,
              ElementsAre(ElementsAre("100.00", "80.00 (node 0)", "1.25", "75.0% (3)", "25.0% (1)")));
  EXPECT_TRUE(Kind().Sections({}).empty());
}

}  // namespace
}  // namespace numaprobe::daemon
