// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/cpulist.cc
#include "kernels/cpulist.h"

#include <gtest/gtest.h>

namespace numaprobe::kernels {
namespace {

TEST(CpuList, ParsesRangesAndSingles) {
  auto ids = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids.value(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
}

TEST(CpuList, SortsAndDeduplicates) {
  auto ids = ParseCpuList("5,1-2,2,1");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids.value(), (std::vector<int>{1, 2, 5}));
}

TEST(CpuList, EmptyIsEmpty) {
  auto ids = ParseCpuList(" \n");
  ASSERT_TRUE(ids.ok());
  EXPECT_TRUE(ids.value().empty());
}

TEST(CpuList, RejectsGarbageNamingTheToken) {
  for (const char* bad : {"a", "1-", "3-1", "1,,2", "-1", "1.5", "99999999"}) {
    auto ids = ParseCpuList(bad);
    ASSERT_FALSE(ids.ok()) << bad;
    EXPECT_EQ(ids.failure().outcome, Outcome::kInvalidSpec);
    EXPECT_NE(ids.failure().reason.find("invalid list element"), std::string::npos) << bad;
  }
}

TEST(CpuList, FormatIsInverseOfParse) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
  EXPECT_EQ(ParseCpuList(FormatCpuList({0, 2, 3, 4, 9})).value(), (std::vector<int>{0, 2, 3, 4, 9}));
}

}  // namespace
}  // namespace numaprobe::kernels
