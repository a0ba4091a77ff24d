// Unit tests for daemon/baseline.cc.
#include "daemon/serve/baseline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace numaprobe::daemon {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

BaselineValue Latency(int cpu_node, int mem_node, double value) {
  BaselineValue v;
  v.probe = "latency";
  v.cpu_node = cpu_node;
  v.mem_node = mem_node;
  v.value = value;
  return v;
}

BaselineValue Bandwidth(int cpu_node, int mem_node, const std::string& op, double value) {
  BaselineValue v = Latency(cpu_node, mem_node, value);
  v.probe = "bandwidth";
  v.op = op;
  return v;
}

TEST(BaselineRecorderTest, BaselineIsThePerPairMedianOverRounds) {
  BaselineRecorder recorder(3);
  recorder.Reset("fp", "settings");
  const double local[] = {1, 3, 2};
  const double remote[] = {10, 30, 20};
  for (int round = 0; round < 3; ++round) {
    recorder.Add(Latency(0, 0, local[round]));
    recorder.Add(Latency(0, 1, remote[round]));
    recorder.Add(Bandwidth(0, 0, "read", 100.0 * (round + 1)));
    const bool completed = recorder.EndRound("2024-05-01T00:00:00Z");
    EXPECT_EQ(completed, round == 2) << "round " << round;
  }
  ASSERT_TRUE(recorder.complete());
  const Baseline& baseline = recorder.baseline();
  EXPECT_EQ(baseline.fingerprint, "fp");
  EXPECT_EQ(baseline.created, "2024-05-01T00:00:00Z");
  ASSERT_THAT(baseline.values, SizeIs(3));
  // Sorted by probe, then nodes: bandwidth before latency, 0->0 before 0->1.
  EXPECT_EQ(baseline.values[0].probe, "bandwidth");
  EXPECT_EQ(baseline.values[0].op, "read");
  EXPECT_DOUBLE_EQ(baseline.values[0].value, 200);
  EXPECT_EQ(baseline.values[1].mem_node, 0);
  EXPECT_DOUBLE_EQ(baseline.values[1].value, 2);
  EXPECT_EQ(baseline.values[2].mem_node, 1);
  EXPECT_DOUBLE_EQ(baseline.values[2].value, 20);
}

TEST(BaselineRecorderTest, OrdersNodesNumerically) {
  BaselineRecorder recorder(1);
  recorder.Add(Latency(0, 10, 1));
  recorder.Add(Latency(0, 2, 1));
  ASSERT_TRUE(recorder.EndRound("t"));
  ASSERT_THAT(recorder.baseline().values, SizeIs(2));
  EXPECT_EQ(recorder.baseline().values[0].mem_node, 2);
  EXPECT_EQ(recorder.baseline().values[1].mem_node, 10);
}

TEST(BaselineRecorderTest, CompletionIsReportedExactlyOnce) {
  BaselineRecorder recorder(2);
  recorder.Add(Latency(0, 0, 1));
  EXPECT_FALSE(recorder.EndRound("t1"));
  recorder.Add(Latency(0, 0, 3));
  EXPECT_TRUE(recorder.EndRound("t2"));
  // Later rounds neither complete it again nor change it.
  recorder.Add(Latency(0, 0, 100));
  EXPECT_FALSE(recorder.EndRound("t3"));
  EXPECT_FALSE(recorder.EndRound("t4"));
  ASSERT_THAT(recorder.baseline().values, SizeIs(1));
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 2);
  EXPECT_EQ(recorder.baseline().created, "t2");
}

TEST(BaselineRecorderTest, RoundsWithoutValuesDoNotCount) {
  BaselineRecorder recorder(2);
  EXPECT_FALSE(recorder.EndRound("t"));
  EXPECT_FALSE(recorder.EndRound("t"));
  recorder.Add(Latency(0, 0, 1));
  EXPECT_FALSE(recorder.EndRound("t"));
  EXPECT_FALSE(recorder.EndRound("t"));
  EXPECT_FALSE(recorder.complete());
  recorder.Add(Latency(0, 0, 2));
  EXPECT_TRUE(recorder.EndRound("t"));
}

TEST(BaselineRecorderTest, PairMissingFromSomeRoundsUsesTheRoundsItHas) {
  BaselineRecorder recorder(3);
  recorder.Add(Latency(0, 0, 1));
  recorder.Add(Latency(0, 1, 7));
  recorder.EndRound("t");
  recorder.Add(Latency(0, 0, 2));
  recorder.EndRound("t");
  recorder.Add(Latency(0, 0, 3));
  ASSERT_TRUE(recorder.EndRound("t"));
  ASSERT_THAT(recorder.baseline().values, SizeIs(2));
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 2);
  EXPECT_DOUBLE_EQ(recorder.baseline().values[1].value, 7);
}

TEST(BaselineRecorderTest, PerCpuValuesAreSeparatePairs) {
  BaselineRecorder recorder(1);
  BaselineValue cpu0 = Latency(0, 0, 1);
  cpu0.cpu = 0;
  BaselineValue cpu1 = Latency(0, 0, 5);
  cpu1.cpu = 1;
  recorder.Add(cpu1);
  recorder.Add(cpu0);
  ASSERT_TRUE(recorder.EndRound("t"));
  ASSERT_THAT(recorder.baseline().values, SizeIs(2));
  EXPECT_EQ(recorder.baseline().values[0].cpu, 0);
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 1);
  EXPECT_DOUBLE_EQ(recorder.baseline().values[1].value, 5);
}

TEST(BaselineRecorderTest, ResetStartsOverWithTheNewFingerprint) {
  BaselineRecorder recorder(2);
  recorder.Reset("old", "settings");
  recorder.Add(Latency(0, 0, 100));
  recorder.EndRound("t");
  recorder.Reset("new", "settings");
  EXPECT_FALSE(recorder.complete());
  EXPECT_EQ(recorder.baseline().fingerprint, "new");
  EXPECT_THAT(recorder.baseline().values, IsEmpty());
  // The sample from before the reset is gone and its round no longer counts.
  recorder.Add(Latency(0, 0, 1));
  EXPECT_FALSE(recorder.EndRound("t"));
  recorder.Add(Latency(0, 0, 3));
  ASSERT_TRUE(recorder.EndRound("t"));
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 2);
}

TEST(BaselineRecorderTest, ResetAfterCompletionRecordsAgain) {
  BaselineRecorder recorder(1);
  recorder.Add(Latency(0, 0, 1));
  ASSERT_TRUE(recorder.EndRound("t"));
  recorder.Reset("fp", "settings");
  recorder.Add(Latency(0, 0, 9));
  ASSERT_TRUE(recorder.EndRound("t"));
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 9);
}

TEST(BaselineRecorderTest, RestoreAdoptsACompleteBaseline) {
  BaselineRecorder recorder(3);
  recorder.Reset("fp", "settings");
  recorder.Add(Latency(0, 0, 100));
  recorder.EndRound("t");
  Baseline stored;
  stored.fingerprint = "fp";
  stored.created = "2024-05-01T00:00:00Z";
  stored.complete = true;
  stored.values = {Latency(0, 1, 20), Latency(0, 0, 10)};
  recorder.Restore(stored);
  ASSERT_TRUE(recorder.complete());
  EXPECT_EQ(recorder.baseline().created, "2024-05-01T00:00:00Z");
  ASSERT_THAT(recorder.baseline().values, SizeIs(2));
  EXPECT_EQ(recorder.baseline().values[0].mem_node, 0);
  // A restored baseline is not "completed" again by later rounds.
  recorder.Add(Latency(0, 0, 1));
  EXPECT_FALSE(recorder.EndRound("t"));
  EXPECT_DOUBLE_EQ(recorder.baseline().values[0].value, 10);
}

TEST(BaselineRecorderTest, RestoreIgnoresAnIncompleteBaseline) {
  BaselineRecorder recorder(1);
  recorder.Reset("fp", "settings");
  Baseline partial;
  partial.fingerprint = "other";
  partial.values = {Latency(0, 0, 10)};
  recorder.Restore(partial);
  EXPECT_FALSE(recorder.complete());
  EXPECT_EQ(recorder.baseline().fingerprint, "fp");
  EXPECT_THAT(recorder.baseline().values, IsEmpty());
}

}  // namespace
}  // namespace numaprobe::daemon
