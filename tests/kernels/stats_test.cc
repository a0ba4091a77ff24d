// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/stats.cc
#include "kernels/stats.h"

#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace numaprobe::kernels {
namespace {

TEST(StatsTest, OddCountMedianIsTheMiddleValue) {
  const std::vector<double> v = {9, 1, 5, 3, 7};
  const SampleStats s = Summarize(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
}

TEST(StatsTest, EvenCountMedianIsTheMeanOfTheTwoMiddleValues) {
  const std::vector<double> v = {4, 1, 3, 2};
  const SampleStats s = Summarize(v);
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
}

TEST(StatsTest, MadIsTheUnscaledMedianAbsoluteDeviation) {
  // median 2; deviations {1, 1, 0, 0, 2, 4, 7} -> sorted {0,0,1,1,2,4,7} -> 1.
  const std::vector<double> v = {1, 1, 2, 2, 4, 6, 9};
  const SampleStats s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.mad, 1);
}

TEST(StatsTest, MadIgnoresOneOutlier) {
  const std::vector<double> v = {10, 10.5, 11, 9.5, 1000};
  const SampleStats s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 10.5);
  EXPECT_DOUBLE_EQ(s.mad, 0.5);  // deviations {0.5, 0, 0.5, 1, 989.5}
  EXPECT_DOUBLE_EQ(s.max, 1000);
}

TEST(StatsTest, SingleSampleHasZeroMad) {
  const std::vector<double> v = {3.25};
  const SampleStats s = Summarize(v);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 3.25);
  EXPECT_DOUBLE_EQ(s.mad, 0);
}

TEST(StatsTest, EmptyInputGivesZeros) {
  const SampleStats s = Summarize({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.mad, 0);
}

TEST(MedianTest, OddCountIsTheMiddleValue) {
  const std::vector<double> v = {9, 1, 5, 3, 7};
  EXPECT_EQ(Median(v), 5);
}

// The mean of the two middle values, as PromQL's quantile(0.5) interpolates:
// neither the lower (2) nor the upper (3) middle value.
TEST(MedianTest, EvenCountIsTheMeanOfTheTwoMiddleValues) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_EQ(Median(v), 2.5);
  const std::vector<double> two = {10, 20};
  EXPECT_EQ(Median(two), 15);
}

TEST(MedianTest, OneValueIsItself) {
  const std::vector<double> v = {3.25};
  EXPECT_EQ(Median(v), 3.25);
}

TEST(MedianTest, EmptyHasNoMedian) { EXPECT_EQ(Median(std::vector<double>{}), std::nullopt); }

TEST(MedianTest, AgreesWithSummarize) {
  const std::vector<double> v = {1, 1, 2, 2, 4, 6, 9, 11};
  EXPECT_EQ(Median(v), Summarize(v).median);
}

}  // namespace
}  // namespace numaprobe::kernels
