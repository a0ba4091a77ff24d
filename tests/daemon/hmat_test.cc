// SPDX-License-Identifier: Apache-2.0
// Unit tests for the firmware's advertised figures (daemon/common/hmat.h) on
// tests/fixtures/host_facts/hmat, and their comparison with measured records
// (daemon/output/hmat_report.h).
#include "daemon/common/hmat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "daemon/output/hmat_report.h"
#include "tests/byte_sizes.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSys = (std::filesystem::path(NUMAPROBE_FIXTURES) / "host_facts/hmat/sys").string();

RecordPtr ReadBandwidth(int cpu_node, int mem_node, double bytes_per_second) {
  kernels::BandwidthResult r;
  r.op = kernels::BandwidthOp::kRead;
  r.bytes_per_second.median = bytes_per_second;
  return MakeBandwidth({cpu_node * 2, cpu_node, mem_node}, r);
}

TEST(HmatTest, ReadsEveryClassThatHasFiguresExactly) {
  const std::vector<HmatTarget> hmat = ReadHmat(kSys);
  ASSERT_EQ(hmat.size(), 5u) << "nodes 0 and 1 in both classes, node 2 (CPU-less) in class 0 only";
  const HmatTarget& cxl = hmat[4];
  EXPECT_EQ(cxl.mem_node, 2);
  EXPECT_EQ(cxl.access_class, 0);
  EXPECT_STREQ(cxl.class_name(), "any");
  EXPECT_THAT(cxl.initiators, ElementsAre(0, 1));
  EXPECT_DOUBLE_EQ(*cxl.read_latency_seconds, 95e-9);
  EXPECT_DOUBLE_EQ(*cxl.write_latency_seconds, 120e-9);
  EXPECT_DOUBLE_EQ(*cxl.read_bandwidth_bytes_per_second, 8192 * kMiB);
  EXPECT_DOUBLE_EQ(*cxl.write_bandwidth_bytes_per_second, 4096 * kMiB);
  EXPECT_EQ(hmat[3].mem_node, 1);
  EXPECT_EQ(hmat[3].access_class, 1);
  EXPECT_DOUBLE_EQ(*hmat[3].read_latency_seconds, 11e-9);
  EXPECT_THAT(hmat[3].initiators, ElementsAre(1));
}

TEST(HmatTest, AHostWithoutHmatHasNone) { EXPECT_TRUE(ReadHmat("/nonexistent/sys").empty()); }

TEST(HmatTest, ThePairsCpuClassWinsAndOtherInitiatorsGetNothing) {
  const std::vector<HmatTarget> hmat = ReadHmat(kSys);
  ASSERT_NE(HmatFor(hmat, 0, 0), nullptr);
  EXPECT_EQ(HmatFor(hmat, 0, 0)->access_class, 1);
  EXPECT_EQ(HmatFor(hmat, 1, 2)->access_class, 0);
  EXPECT_EQ(HmatFor(hmat, 1, 0), nullptr) << "node 0's figures are for initiators on node 0 only";
}

TEST(HmatTest, MeasuredOverAdvertisedForTheMeasuredPairs) {
  const std::vector<HmatTarget> hmat = ReadHmat(kSys);
  const std::vector<RecordPtr> records = {MakeLatencyFigure(0, 2, 190e-9), ReadBandwidth(0, 2, 4096 * kMiB),
                                          MakeLatencyFigure(1, 0, 150e-9), MakeLatencyFigure(1, 1, 22e-9),
                                          MakeLatencyFigure(1, 1, 44e-9)};
  const std::vector<HmatComparison> compared = CompareWithHmat(hmat, records);
  ASSERT_EQ(compared.size(), 2u) << "1 -> 0 has no advertised figure";
  EXPECT_EQ(compared[0].cpu_node, 0);
  EXPECT_EQ(compared[0].mem_node, 2);
  EXPECT_DOUBLE_EQ(*compared[0].RatioOf(HmatAttribute::kReadLatency), 2.0);
  EXPECT_DOUBLE_EQ(*compared[0].RatioOf(HmatAttribute::kReadBandwidth), 0.5);
  EXPECT_FALSE(compared[0].RatioOf(HmatAttribute::kWriteBandwidth)) << "no write figure was measured";
  EXPECT_EQ(compared[1].mem_node, 1);
  EXPECT_DOUBLE_EQ(*compared[1].RatioOf(HmatAttribute::kReadLatency), 3.0) << "median of 22 and 44 ns over 11 ns";

  const auto json = HmatToJson(hmat, records);
  ASSERT_EQ(json["targets"].size(), 5u);
  EXPECT_EQ(json["measured"][0]["initiator_class"], "any");
  EXPECT_DOUBLE_EQ(json["measured"][0]["latency_ratio"].get<double>(), 2.0);
  EXPECT_TRUE(json["measured"][0]["write_bandwidth_ratio"].is_null());

  const std::vector<ReportSection> sections = HmatSections(hmat, records);
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_THAT(sections[0].row_labels[4], HasSubstr("node 2 (any: 0-1)"));
  EXPECT_THAT(sections[0].cells[4], ElementsAre("95", "120", "8.6", "4.3"));
  EXPECT_THAT(sections[1].cells[0], ElementsAre("2.00", "0.50", "-"));
}

TEST(HmatTest, ACopyHasNoAdvertisedCounterpart) {
  kernels::BandwidthResult copy;
  copy.op = kernels::BandwidthOp::kCopy;
  copy.bytes_per_second.median = 4096 * kMiB;
  EXPECT_TRUE(CompareWithHmat(ReadHmat(kSys), {MakeBandwidth({0, 0, 2}, copy)}).empty())
      << "a copy reads and writes at once: neither advertised bandwidth is its figure";
}

TEST(HmatTest, NoHmatNoSections) {
  EXPECT_TRUE(HmatSections({}, {MakeLatencyFigure(0, 0, 1e-7)}).empty());
  EXPECT_TRUE(CompareWithHmat({}, {MakeLatencyFigure(0, 0, 1e-7)}).empty());
}

}  // namespace
}  // namespace numaprobe::daemon
