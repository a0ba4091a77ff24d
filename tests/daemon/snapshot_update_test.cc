// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/snapshot_update.cc
#include "daemon/serve/snapshot_update.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "daemon/probing/kinds/kind_settings.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

RecordPtr Latency(int mem_node, k::Outcome outcome, double median = 1e-7, int cpu = 1) {
  k::LatencyResult r;
  r.outcome = outcome;
  r.seconds_per_load.median = median;
  r.seconds_per_load.n = 7;
  r.stride = 128;
  r.buffer.node = mem_node;
  r.discards.context_switch = 2;
  return MakeLatency({cpu, 0, mem_node}, r);
}

RecordPtr Bandwidth(k::BandwidthOp op, k::Outcome outcome) {
  k::BandwidthResult r;
  r.outcome = outcome;
  r.op = op;
  return MakeBandwidth({1, 0, 0}, r);
}

RecordPtr C2c(const C2cPair& pair, k::Outcome outcome) {
  k::C2cResult r;
  r.outcome = outcome;
  return MakeC2c(pair, 0, r);
}

// The published figures of `kind`, failed-run counts included.
std::vector<Timed> Of(const Snapshot& s, const ProbeKind& kind) {
  std::vector<Timed> of;
  for (const Timed& t : s.figures) {
    if (&t.record->kind() == &kind) of.push_back(t);
  }
  return of;
}

double Median(const Timed& t) { return ResultOf<k::LatencyResult>(*t.record).seconds_per_load.median; }

class SnapshotUpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto topo = k::Topology::FromSynthetic("pack:2 [numa] core:2 pu:1", {});
    ASSERT_TRUE(topo.ok()) << topo.failure().reason;
    topology_ = std::move(topo).value();
    plan_.memory_pairs = {{1, 0, 0}, {1, 0, 1}};
    PlanSnapshot(s_, config_, topology_, plan_, HostInfo{}, "0123456789abcdef");
  }
  Config config_;
  k::Topology topology_;
  Plan plan_;
  Snapshot s_;
};

TEST_F(SnapshotUpdateTest, KnownSeriesStartAtZero) {
  EXPECT_EQ(s_.runs_total.at({"latency", "ok"}), 0u);
  EXPECT_EQ(s_.runs_total.at({"core_to_core", "timeout"}), 0u);
  EXPECT_EQ(s_.discards_total.at({"bandwidth", "migration"}), 0u);
  EXPECT_EQ(s_.placement_failures_total.at({1, "placement_mismatch"}), 0u);
  EXPECT_EQ(s_.distances.size(), 2u);
  // The budget is the scheduler's (learning or duty_cycle): a plan leaves it
  // (SchedulerLoop.PublishesTheLearningBudget...).
  EXPECT_DOUBLE_EQ(s_.duty_cycle_budget_ratio, 0);
}

TEST_F(SnapshotUpdateTest, SuccessPublishesAndCounts) {
  RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_DOUBLE_EQ(Of(s_, LatencyProbe())[0].unix_seconds, 1000.0);
  EXPECT_EQ(s_.runs_total.at({"latency", "ok"}), 1u);
  EXPECT_DOUBLE_EQ(s_.cpu_seconds_total.at("latency"), 0.03);
  EXPECT_EQ(s_.discards_total.at({"latency", "context_switch"}), 2u);
  EXPECT_DOUBLE_EQ(s_.last_success.at({"latency", 0, 1}), 1000.0);
  ASSERT_EQ(s_.probe_config.size(), 1u);
  EXPECT_EQ(s_.probe_config[0].labels.at("mem_node"), "1");
  EXPECT_EQ(s_.probe_config[0].labels.at("stride"), "128");
}

TEST_F(SnapshotUpdateTest, PlacementFailureWithdrawsTheFigure) {
  RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kPlacementMismatch), 2000.0, 0.01);
  EXPECT_TRUE(Of(s_, LatencyProbe()).empty()) << "a figure whose memory moved must not stay published";
  EXPECT_EQ(s_.placement_failures_total.at({1, "placement_mismatch"}), 1u);
  EXPECT_EQ(s_.runs_total.at({"latency", "placement_mismatch"}), 1u);
  EXPECT_DOUBLE_EQ(s_.last_success.at({"latency", 0, 1}), 1000.0);
}

TEST_F(SnapshotUpdateTest, OtherFailuresKeepTheLastGoodFigure) {
  RecordRun(s_, Latency(1, k::Outcome::kOk, 1e-7), 1000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kDisturbed, 5e-7), 2000.0, 0.03);
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_DOUBLE_EQ(Median(Of(s_, LatencyProbe())[0]), 1e-7);
  EXPECT_DOUBLE_EQ(Of(s_, LatencyProbe())[0].unix_seconds, 1000.0);
  EXPECT_EQ(s_.runs_total.at({"latency", "disturbed"}), 1u);
}

// A clock too coarse for the samples is counted like any outcome, its series
// there from the start, for every kind.
TEST_F(SnapshotUpdateTest, CoarseClockIsCountedAndItsSeriesStartAtZero) {
  for (const char* probe : {"latency", "bandwidth", "core_to_core"}) {
    EXPECT_EQ(s_.runs_total.at({probe, "coarse_clock"}), 0u) << probe;
  }
  RecordRun(s_, Latency(1, k::Outcome::kOk, 1e-7), 1000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kCoarseClock), 2000.0, 0.03);
  RecordRun(s_, C2c({0, 1, 0, k::CpuRelation::kSmt}, k::Outcome::kCoarseClock), 2000.0, 0.01);
  EXPECT_EQ(s_.runs_total.at({"latency", "coarse_clock"}), 1u);
  EXPECT_EQ(s_.runs_total.at({"core_to_core", "coarse_clock"}), 1u);
  EXPECT_EQ(s_.runs_total.at({"latency", "ok"}), 1u);
}

TEST_F(SnapshotUpdateTest, ReplanDropsPairsThatLeftThePlan) {
  RecordRun(s_, Latency(0, k::Outcome::kOk), 1000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
  plan_.memory_pairs = {{1, 0, 0}};
  PlanSnapshot(s_, config_, topology_, plan_, HostInfo{}, "0123456789abcdef");
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_EQ(Of(s_, LatencyProbe())[0].record->target().pair.mem_node, 0);
  EXPECT_EQ(s_.runs_total.at({"latency", "ok"}), 2u) << "counters are monotonic across replans";
  // Its health series go too, or NumaProbeProbeStale would fire until a restart.
  EXPECT_TRUE(s_.last_success.contains({"latency", 0, 0}));
  EXPECT_FALSE(s_.last_success.contains({"latency", 0, 1}));
  EXPECT_FALSE(s_.placement_failures_total.contains({1, "placement_mismatch"}));
}

TEST_F(SnapshotUpdateTest, DisablingAProbeDropsItsHealthSeries) {
  RecordRun(s_, Latency(0, k::Outcome::kOk), 1000.0, 0.03);
  config_.probes.Of<LatencyConfig>().enabled = false;
  PlanSnapshot(s_, config_, topology_, plan_, HostInfo{}, "0123456789abcdef");
  EXPECT_TRUE(Of(s_, LatencyProbe()).empty());
  EXPECT_FALSE(s_.last_success.contains({"latency", 0, 0}));
  EXPECT_TRUE(std::none_of(s_.probe_config.begin(), s_.probe_config.end(),
                           [](const ProbeConfigInfo& info) { return info.probe == "latency"; }));
}

// A configured CPU that left the cpuset: its figure is withdrawn, not left to
// look current.
TEST_F(SnapshotUpdateTest, TargetNoLongerAllowedWithdrawsTheFigure) {
  for (k::Outcome gone : {k::Outcome::kPinFailed, k::Outcome::kNotAllowed}) {
    RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
    ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
    RecordRun(s_, Latency(1, gone), 2000.0, 0.01);
    EXPECT_TRUE(Of(s_, LatencyProbe()).empty()) << k::OutcomeName(gone);
  }
}

TEST_F(SnapshotUpdateTest, BandwidthIsKeyedByOp) {
  RecordRun(s_, Bandwidth(k::BandwidthOp::kRead, k::Outcome::kOk), 1.0, 0.01);
  RecordRun(s_, Bandwidth(k::BandwidthOp::kWrite, k::Outcome::kOk), 2.0, 0.01);
  RecordRun(s_, Bandwidth(k::BandwidthOp::kWrite, k::Outcome::kOk), 3.0, 0.01);
  ASSERT_EQ(Of(s_, BandwidthProbe()).size(), 2u);
  EXPECT_DOUBLE_EQ(Of(s_, BandwidthProbe())[1].unix_seconds, 3.0);
  // probe_config_info too: one series per op, so differing bursts do not churn.
  std::vector<std::string> ops;
  for (const auto& info : s_.probe_config) {
    if (info.probe == "bandwidth") ops.push_back(info.labels.at("op"));
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"read", "write"}));
}

// A series that fails every round (disturbed, timeout, alloc_failed) must not
// keep publishing a figure that may be days old: the last good figure survives
// two failed runs in a row and is withdrawn at the third.
TEST_F(SnapshotUpdateTest, ThreeFailedRunsInARowWithdrawTheFigure) {
  for (k::Outcome failure : {k::Outcome::kDisturbed, k::Outcome::kTimeout, k::Outcome::kAllocFailed}) {
    RecordRun(s_, Latency(1, k::Outcome::kOk, 1e-7), 1000.0, 0.03);
    RecordRun(s_, Latency(1, failure), 2000.0, 0.03);
    RecordRun(s_, Latency(1, failure), 3000.0, 0.03);
    ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u) << k::OutcomeName(failure);
    EXPECT_EQ(Of(s_, LatencyProbe())[0].failed_runs, 2);
    EXPECT_DOUBLE_EQ(Of(s_, LatencyProbe())[0].unix_seconds, 1000.0);
    RecordRun(s_, Latency(1, failure), 4000.0, 0.03);
    EXPECT_TRUE(Of(s_, LatencyProbe()).empty()) << k::OutcomeName(failure);
    // A later success publishes it again.
    RecordRun(s_, Latency(1, k::Outcome::kOk, 2e-7), 5000.0, 0.03);
    ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
    EXPECT_EQ(Of(s_, LatencyProbe())[0].failed_runs, 0);
    s_.figures.clear();
  }
}

TEST_F(SnapshotUpdateTest, ASuccessResetsTheFailedRunCount) {
  RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kDisturbed), 2000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kTimeout), 3000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kOk, 3e-7), 4000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kDisturbed), 5000.0, 0.03);
  RecordRun(s_, Latency(1, k::Outcome::kDisturbed), 6000.0, 0.03);
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_DOUBLE_EQ(Median(Of(s_, LatencyProbe())[0]), 3e-7);
  EXPECT_EQ(Of(s_, LatencyProbe())[0].failed_runs, 2);
}

// Stopping cancels the probe in flight: that says nothing about the series.
TEST_F(SnapshotUpdateTest, CancelledRunsDoNotCountAsFailures) {
  RecordRun(s_, Latency(1, k::Outcome::kOk), 1000.0, 0.03);
  for (int i = 0; i < 5; ++i) RecordRun(s_, Latency(1, k::Outcome::kCancelled), 2000.0 + i, 0.0);
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_EQ(Of(s_, LatencyProbe())[0].failed_runs, 0);
}

// Per-CPU mode: two CPUs of node 0 share the last_success key
// (latency, 0, mem_node). The one that keeps failing goes; the other stays.
TEST_F(SnapshotUpdateTest, FailedRunsAreCountedPerLatencySeries) {
  const RecordPtr cpu1 = Latency(1, k::Outcome::kOk, 1e-7, 1);
  RecordRun(s_, Latency(1, k::Outcome::kOk, 1e-7, 0), 1000.0, 0.03);
  RecordRun(s_, cpu1, 1000.0, 0.03);
  const RecordPtr cpu0 = Latency(1, k::Outcome::kDisturbed, 1e-7, 0);
  for (int round = 1; round <= 3; ++round) {
    RecordRun(s_, cpu0, 1000.0 + 300 * round, 0.03);
    RecordRun(s_, cpu1, 1000.0 + 300 * round, 0.03);
  }
  ASSERT_EQ(Of(s_, LatencyProbe()).size(), 1u);
  EXPECT_EQ(Of(s_, LatencyProbe())[0].record->target().pair.cpu, 1);
  EXPECT_DOUBLE_EQ(s_.last_success.at({"latency", 0, 1}), 1900.0) << "kept fresh by the sibling";
}

// All ops of a pair share one last_success key: a failing op must not hide
// behind the ops that succeed.
TEST_F(SnapshotUpdateTest, FailedRunsAreCountedPerBandwidthOp) {
  RecordPtr read = Bandwidth(k::BandwidthOp::kRead, k::Outcome::kOk);
  const RecordPtr write = Bandwidth(k::BandwidthOp::kWrite, k::Outcome::kOk);
  RecordRun(s_, read, 1000.0, 0.01);
  RecordRun(s_, write, 1000.0, 0.01);
  read = Bandwidth(k::BandwidthOp::kRead, k::Outcome::kTimeout);
  for (int round = 1; round <= 2; ++round) {
    RecordRun(s_, read, 1000.0 + 300 * round, 0.01);
    RecordRun(s_, write, 1000.0 + 300 * round, 0.01);
  }
  ASSERT_EQ(Of(s_, BandwidthProbe()).size(), 2u) << "two failures in a row keep the last good figure";
  RecordRun(s_, read, 1900.0, 0.01);
  RecordRun(s_, write, 1900.0, 0.01);
  ASSERT_EQ(Of(s_, BandwidthProbe()).size(), 1u);
  EXPECT_EQ(Of(s_, BandwidthProbe())[0].record->target().variant, "write");
  EXPECT_EQ(Of(s_, BandwidthProbe())[0].failed_runs, 0);
  EXPECT_DOUBLE_EQ(s_.last_success.at({"bandwidth", 0, 0}), 1900.0);
}

// The smt, same_llc and same_node pairs of a node share one last_success key.
TEST_F(SnapshotUpdateTest, FailedRunsAreCountedPerC2cPair) {
  RecordPtr smt = C2c({0, 1, 0, k::CpuRelation::kSmt}, k::Outcome::kOk);
  const RecordPtr llc = C2c({0, 2, 0, k::CpuRelation::kSameLlc}, k::Outcome::kOk);
  RecordRun(s_, smt, 1000.0, 0.01);
  RecordRun(s_, llc, 1000.0, 0.01);
  smt = C2c({0, 1, 0, k::CpuRelation::kSmt}, k::Outcome::kDisturbed);
  for (int round = 1; round <= 3; ++round) {
    RecordRun(s_, smt, 1000.0 + 300 * round, 0.01);
    RecordRun(s_, llc, 1000.0 + 300 * round, 0.01);
    EXPECT_EQ(Of(s_, CoreToCoreProbe()).size(), round < 3 ? 2u : 1u) << "round " << round;
  }
  ASSERT_EQ(Of(s_, CoreToCoreProbe()).size(), 1u);
  EXPECT_EQ(Of(s_, CoreToCoreProbe())[0].record->target().relation, k::CpuRelation::kSameLlc);
  EXPECT_DOUBLE_EQ(s_.last_success.at({"core_to_core", 0, 0}), 1900.0);
}

}  // namespace
}  // namespace numaprobe::daemon
