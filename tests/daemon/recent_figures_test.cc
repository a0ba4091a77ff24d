// Unit tests for daemon/serve/recent_figures.cc.
#include "daemon/serve/recent_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

BaselineValue Figure(const std::string& probe, int mem_node, double value, const std::string& op = "") {
  BaselineValue v;
  v.probe = probe;
  v.cpu_node = 0;
  v.mem_node = mem_node;
  v.op = op;
  v.value = value;
  return v;
}

TEST(RecentFiguresTest, AbsentUntilThreeFigures) {
  RecentFigures recent;
  recent.Add(Figure("latency", 1, 100));
  recent.Add(Figure("latency", 1, 101));
  EXPECT_THAT(recent.Medians(), IsEmpty());
  recent.Add(Figure("latency", 1, 99));
  ASSERT_THAT(recent.Medians(), SizeIs(1));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 100);
}

TEST(RecentFiguresTest, OneOutlierDoesNotMoveTheMedianAndOldFiguresDropOut) {
  RecentFigures recent;
  for (double v : {100.0, 150.0, 101.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 101);
  // A sustained rise: two of the last three.
  recent.Add(Figure("latency", 1, 115));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 115) << "window is 150, 101, 115";
  recent.Add(Figure("latency", 1, 116));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 115) << "window is 101, 115, 116";
}

TEST(RecentFiguresTest, SeriesAreSeparateByPairOpAndCpu) {
  RecentFigures recent;
  for (int i = 0; i < 3; ++i) {
    recent.Add(Figure("latency", 0, 1));
    recent.Add(Figure("latency", 1, 2));
    recent.Add(Figure("bandwidth", 1, 3, "read"));
    recent.Add(Figure("bandwidth", 1, 4, "copy"));
  }
  BaselineValue per_cpu = Figure("latency", 1, 5);
  per_cpu.cpu = 7;
  recent.Add(per_cpu);
  const auto medians = recent.Medians();
  ASSERT_THAT(medians, SizeIs(4));
  EXPECT_EQ(medians[0].probe, "bandwidth");
  EXPECT_EQ(medians[0].op, "copy");
  EXPECT_DOUBLE_EQ(medians[0].value, 4);
  EXPECT_DOUBLE_EQ(medians[1].value, 3);
  EXPECT_DOUBLE_EQ(medians[2].value, 1);
  EXPECT_DOUBLE_EQ(medians[3].value, 2);
}

TEST(RecentFiguresTest, ClearStartsOver) {
  RecentFigures recent;
  for (int i = 0; i < 3; ++i) recent.Add(Figure("latency", 1, 100));
  recent.Clear();
  recent.Add(Figure("latency", 1, 100));
  EXPECT_THAT(recent.Medians(), IsEmpty());
}

}  // namespace
}  // namespace numaprobe::daemon
