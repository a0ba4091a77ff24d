// SPDX-License-Identifier: Apache-2.0
// Unit tests for the terminal table of `numaprobe probe` (output/table_report.cc,
// the kinds' Sections): what a person reads at a terminal.
#include "daemon/output/table_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using ::testing::HasSubstr;
using ::testing::Not;

k::LatencyResult MeasuredLatency(double median, double min, k::PageKind pages, std::size_t page_bytes) {
  k::LatencyResult r;
  r.outcome = k::Outcome::kOk;
  r.seconds_per_load = {median, min, 1.5e-7, 2e-9, 7};
  r.buffer.bytes = 16u << 20;
  r.buffer.page_kind = pages;
  r.buffer.page_bytes = page_bytes;
  return r;
}

// The median is the figure, the minimum beside it the like-for-like partner of
// multichase's default (best of samples): both in the cell, the title says so.
TEST(TableReport, LatencyCellGivesMedianThenMinimum) {
  ProbeReport report;
  report.records.push_back(MakeLatency({3, 0, 0}, MeasuredLatency(1.304e-7, 1.251e-7, k::PageKind::kThp, 2u << 20)));
  report.records.push_back(MakeLatency({3, 0, 1}, MeasuredLatency(2.1e-7, 2.05e-7, k::PageKind::kThp, 2u << 20)));
  const std::string text = FormatReport(report);
  EXPECT_THAT(text, HasSubstr("Idle memory latency (ns, median / minimum of the samples; pages: 2MiB-thp)\n"));
  EXPECT_THAT(text, HasSubstr("130.4 / 125.1"));
  EXPECT_THAT(text, HasSubstr("210.0 / 205.0"));
}

// A failed run has neither figure: its cell is the note's number.
TEST(TableReport, FailedLatencyCellHasNoFigures) {
  ProbeReport report;
  k::LatencyResult failed = MeasuredLatency(1.3e-7, 1.2e-7, k::PageKind::kBase, 4096);
  failed.outcome = k::Outcome::kDisturbed;
  failed.reason = "cpu 3: only 2 of 7 samples undisturbed";
  report.records.push_back(MakeLatency({3, 0, 0}, failed));
  const std::string text = FormatReport(report);
  EXPECT_THAT(text, HasSubstr("!1"));
  EXPECT_THAT(text, HasSubstr("!1 latency cpu 3 -> node 0: disturbed: cpu 3: only 2 of 7 samples undisturbed"));
  const std::string row = text.substr(text.find("cpu   3 (node 0)"));
  EXPECT_THAT(row.substr(0, row.find('\n')), Not(HasSubstr(" / ")));
}

}  // namespace
}  // namespace numaprobe::daemon
