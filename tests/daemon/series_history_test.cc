// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/results/series_history.cc: the recent figures'
// medians (what the drift and peer comparisons read).
#include "daemon/serve/results/series_history.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>

namespace numaprobe::daemon {
namespace {

constexpr int kNeverArms = 1000;  // figures a baseline needs: the recent figures alone

void AddAll(SeriesHistory& history, std::initializer_list<double> figures) {
  for (const double figure : figures) history.Add(figure, 0, kNeverArms);
}

// The peer comparison's median is of the last 9 figures: absent until 9, it
// moves less than the median of 5 on the same figures, and a rise of 5 in a
// row (a suspicious figure and its 4 confirmations) moves it at once.
TEST(SeriesHistoryTest, PeerMedianIsOfTheLastNineAndFollowsAConfirmedRise) {
  ASSERT_EQ(SeriesHistory::kPeerWindow, 9u);
  ASSERT_EQ(SeriesHistory::kWindow, 5u);
  SeriesHistory history;
  AddAll(history, {100.0, 104.0, 96.0, 103.0, 97.0, 102.0, 98.0, 101.0});
  EXPECT_EQ(history.Median(SeriesHistory::kPeerWindow), std::nullopt) << "8 figures";
  EXPECT_EQ(history.Median(SeriesHistory::kWindow), 101) << "the median of 5 of 103, 97, 102, 98, 101";
  AddAll(history, {99.0});
  EXPECT_EQ(history.Median(SeriesHistory::kPeerWindow), 100) << "all 9";
  AddAll(history, {112.0, 113.0, 111.0, 114.0});
  EXPECT_EQ(history.Median(SeriesHistory::kPeerWindow), 102) << "4 of 9 risen: one healthy figure up";
  AddAll(history, {112.5});
  EXPECT_EQ(history.Median(SeriesHistory::kPeerWindow), 111) << "5 of 9 risen: the lowest of them";
  EXPECT_EQ(history.Median(SeriesHistory::kWindow), 112.5) << "the median of 5 is all risen";
}

}  // namespace
}  // namespace numaprobe::daemon
