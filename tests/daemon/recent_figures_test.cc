// Unit tests for daemon/serve/recent_figures.cc.
#include "daemon/serve/recent_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/probing/kinds/kinds.h"

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

TEST(RecentFiguresTest, AbsentUntilFiveFigures) {
  RecentFigures recent;
  for (double v : {100.0, 101.0, 98.0, 102.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_THAT(recent.Medians(), IsEmpty());
  recent.Add(Figure("latency", 1, 99));
  ASSERT_THAT(recent.Medians(), SizeIs(1));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 100);
}

TEST(RecentFiguresTest, TwoOutliersDoNotMoveTheMedianAndOldFiguresDropOut) {
  RecentFigures recent;
  for (double v : {100.0, 150.0, 101.0, 160.0, 99.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 101);
  // A sustained rise: three of the last five.
  recent.Add(Figure("latency", 1, 115));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 115) << "window is 150, 101, 160, 99, 115";
  recent.Add(Figure("latency", 1, 116));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 115) << "window is 101, 160, 99, 115, 116";
  recent.Add(Figure("latency", 1, 117));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 116) << "window is 160, 99, 115, 116, 117";
}

// The peer comparison's median is of the last 9 figures: absent until 9, it
// moves less than the median of 5 on the same figures, and a rise of 5 in a
// row (a suspicious figure and its 4 confirmations) moves it at once.
TEST(RecentFiguresTest, PeerMedianIsOfTheLastNineAndFollowsAConfirmedRise) {
  ASSERT_EQ(RecentFigures::kPeerWindow, 9u);
  RecentFigures recent;
  for (double v : {100.0, 104.0, 96.0, 103.0, 97.0, 102.0, 98.0, 101.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_THAT(recent.Medians(RecentFigures::kPeerWindow), IsEmpty()) << "8 figures";
  ASSERT_THAT(recent.Medians(), SizeIs(1));
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 101) << "the median of 5 of 103, 97, 102, 98, 101";
  recent.Add(Figure("latency", 1, 99));
  ASSERT_THAT(recent.Medians(RecentFigures::kPeerWindow), SizeIs(1));
  EXPECT_DOUBLE_EQ(recent.Medians(RecentFigures::kPeerWindow)[0].value, 100) << "all 9";
  for (double v : {112.0, 113.0, 111.0, 114.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_DOUBLE_EQ(recent.Medians(RecentFigures::kPeerWindow)[0].value, 102) << "4 of 9 risen: one healthy figure up";
  recent.Add(Figure("latency", 1, 112.5));
  EXPECT_DOUBLE_EQ(recent.Medians(RecentFigures::kPeerWindow)[0].value, 111) << "5 of 9 risen: the lowest of them";
  EXPECT_DOUBLE_EQ(recent.Medians()[0].value, 112.5) << "the median of 5 is all risen";
}

// The bands are the kinds' (ProbeKind::ConfirmationBand): latency +5%,
// bandwidth -10%; core-to-core is never confirmed.
TEST(RecentFiguresTest, ConfirmsAFigureThatLeavesItsBandWhileTheMedianIsInside) {
  const double latency = *LatencyProbe().ConfirmationBand(), bandwidth = *BandwidthProbe().ConfirmationBand();
  ASSERT_DOUBLE_EQ(latency, 0.05);
  ASSERT_DOUBLE_EQ(bandwidth, -0.10);
  EXPECT_FALSE(CoreToCoreProbe().ConfirmationBand());
  RecentFigures recent;
  EXPECT_TRUE(recent.NeedsConfirmation(Figure("latency", 1, 106), 100.0, latency)) << "no median yet: confirm";
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("latency", 1, 106), std::nullopt, latency)) << "no baseline";
  for (double v : {100.0, 101.0, 99.0, 100.0, 102.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("latency", 1, 104.9), 100.0, latency)) << "just inside the band";
  EXPECT_TRUE(recent.NeedsConfirmation(Figure("latency", 1, 105.1), 100.0, latency));
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("latency", 1, 80), 100.0, latency)) << "faster is no regression";
  // Bandwidth regresses downwards, with its own band.
  for (double v : {100.0, 101.0, 99.0, 100.0, 102.0}) recent.Add(Figure("bandwidth", 1, v, "read"));
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("bandwidth", 1, 91, "read"), 100.0, bandwidth));
  EXPECT_TRUE(recent.NeedsConfirmation(Figure("bandwidth", 1, 89, "read"), 100.0, bandwidth));
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("bandwidth", 1, 130, "read"), 100.0, bandwidth));
  // Once the median itself is beyond the band, nothing more is confirmed:
  // the step is established and further runs would only cost CPU.
  for (double v : {110.0, 111.0, 109.0}) recent.Add(Figure("latency", 1, v));
  EXPECT_FALSE(recent.NeedsConfirmation(Figure("latency", 1, 112), 100.0, latency));
}

TEST(RecentFiguresTest, SeriesAreSeparateByPairOpAndCpu) {
  RecentFigures recent;
  for (std::size_t i = 0; i < RecentFigures::kWindow; ++i) {
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
  for (std::size_t i = 0; i < RecentFigures::kWindow; ++i) recent.Add(Figure("latency", 1, 100));
  recent.Clear();
  recent.Add(Figure("latency", 1, 100));
  EXPECT_THAT(recent.Medians(), IsEmpty());
}

}  // namespace
}  // namespace numaprobe::daemon
