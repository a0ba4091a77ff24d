// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/json_report.cc
#include "daemon/output/json_report.h"

#include <gtest/gtest.h>

#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

k::LatencyResult OkLatency() {
  k::LatencyResult r;
  r.outcome = k::Outcome::kOk;
  r.cpu = 3;
  r.seconds_per_load = {1.3e-7, 1.2e-7, 1.5e-7, 2e-9, 7};
  r.loads_per_sample = 40000;
  r.stride = 128;
  r.window_bytes = 2 << 20;
  r.buffer.node = 1;
  r.buffer.bytes = 256u << 20;
  r.buffer.page_kind = k::PageKind::kThp;
  r.buffer.page_bytes = 2u << 20;
  r.buffer.huge_fraction = 1.0;
  r.buffer.placement = {1, 128, 0, 0, -1, 0, "move_pages"};
  return r;
}

TEST(JsonReport, LatencyCarriesFiguresSpreadPagesAndPlacement) {
  ProbeReport report;
  report.records.push_back(MakeLatency({3, 0, 1}, OkLatency()));
  const auto j = ReportToJson(report, k::Topology::FromSynthetic("pack:1 [numa] core:2 pu:1", {}).value(), Plan{});
  const auto& lat = j.at("latency").at(0);
  EXPECT_EQ(lat.at("outcome"), "ok");
  EXPECT_EQ(lat.at("cpu_node"), 0);
  EXPECT_EQ(lat.at("mem_node"), 1);
  EXPECT_DOUBLE_EQ(lat.at("median_seconds").get<double>(), 1.3e-7);
  // The minimum beside the median: multichase's default figure is its best sample.
  EXPECT_DOUBLE_EQ(lat.at("min_seconds").get<double>(), 1.2e-7);
  EXPECT_LE(lat.at("min_seconds").get<double>(), lat.at("median_seconds").get<double>());
  EXPECT_DOUBLE_EQ(lat.at("mad_seconds").get<double>(), 2e-9);
  EXPECT_EQ(lat.at("samples"), 7);
  EXPECT_EQ(lat.at("buffer").at("page_size"), "2MiB-thp");
  EXPECT_EQ(lat.at("buffer").at("placement").at("verified"), true);
  EXPECT_EQ(lat.at("buffer").at("placement").at("method"), "move_pages");
  EXPECT_EQ(j.at("ok"), true);
}

TEST(JsonReport, FailedProbeHasNullFiguresAndItsReason) {
  ProbeReport report;
  k::LatencyResult r = OkLatency();
  r.outcome = k::Outcome::kPlacementMismatch;
  r.reason = "node 1 requested, page at offset 0 is on node 0";
  r.buffer.placement = {1, 128, 128, 0, 0, 0, "move_pages"};
  report.records.push_back(MakeLatency({3, 0, 1}, r));
  const auto j = ReportToJson(report, k::Topology::FromSynthetic("pack:1 [numa] core:2 pu:1", {}).value(), Plan{});
  const auto& lat = j.at("latency").at(0);
  EXPECT_EQ(lat.at("outcome"), "placement_mismatch");
  EXPECT_TRUE(lat.at("median_seconds").is_null());
  EXPECT_TRUE(lat.at("min_seconds").is_null());
  EXPECT_EQ(lat.at("reason"), r.reason);
  EXPECT_EQ(lat.at("buffer").at("placement").at("verified"), false);
  EXPECT_EQ(lat.at("buffer").at("placement").at("observed_node"), 0);
  EXPECT_EQ(j.at("ok"), false);
}

// Every record says how finely its samples were timed; coarse_clock carries
// the clock's step and the sample it could not time, and no figure.
TEST(JsonReport, CoarseClockCarriesResolutionAndSampleLengthWithoutFigures) {
  ProbeReport report;
  k::LatencyResult ok = OkLatency();
  ok.clock = {2e-8, 4.5e-3, 100};
  k::LatencyResult coarse = OkLatency();
  coarse.outcome = k::Outcome::kCoarseClock;
  coarse.reason = "cpu 3: a sample of 40.000 µs spans 40 steps of the clock (step 1.000 µs)";
  coarse.clock = {1e-6, 4e-5, 100};
  coarse.longest_sample_loads = 100'001;
  report.records.push_back(MakeLatency({3, 0, 1}, ok));
  report.records.push_back(MakeLatency({3, 0, 0}, coarse));
  const auto j = ReportToJson(report, k::Topology::FromSynthetic("pack:1 [numa] core:2 pu:1", {}).value(), Plan{});
  const auto& good = j.at("latency").at(0).at("clock");
  EXPECT_DOUBLE_EQ(good.at("resolution_seconds").get<double>(), 2e-8);
  EXPECT_DOUBLE_EQ(good.at("shortest_sample_seconds").get<double>(), 4.5e-3);
  const auto& lat = j.at("latency").at(1);
  EXPECT_EQ(lat.at("outcome"), "coarse_clock");
  EXPECT_EQ(lat.at("reason"), coarse.reason);
  EXPECT_DOUBLE_EQ(lat.at("clock").at("resolution_seconds").get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(lat.at("clock").at("shortest_sample_seconds").get<double>(), 4e-5);
  EXPECT_EQ(lat.at("clock").at("min_steps_per_sample"), 100);
  EXPECT_EQ(lat.at("longest_sample_loads"), 100'001);
  EXPECT_TRUE(lat.at("median_seconds").is_null());
  EXPECT_TRUE(lat.at("mad_seconds").is_null());
  EXPECT_EQ(j.at("ok"), false);
}

TEST(JsonReport, BandwidthCountsThreadsAndExactBytes) {
  ProbeReport report;
  k::BandwidthResult b;
  b.op = k::BandwidthOp::kCopy;
  b.cpus = {1, 0};
  b.isa = k::Isa::kAvx2;
  b.bytes_per_burst = 4 * (64u << 20);
  b.bytes_total = 5 * b.bytes_per_burst;
  b.bytes_per_second = {3e10, 2.9e10, 3.1e10, 1e8, 5};
  report.records.push_back(MakeBandwidth({1, 0, 0}, b));
  const auto j = ReportToJson(report, k::Topology::FromSynthetic("pack:1 [numa] core:2 pu:1", {}).value(), Plan{});
  const auto& bw = j.at("bandwidth").at(0);
  EXPECT_EQ(bw.at("op"), "copy");
  EXPECT_EQ(bw.at("threads"), 2);
  EXPECT_EQ(bw.at("isa"), "avx2");
  EXPECT_EQ(bw.at("bytes_per_burst").get<std::uint64_t>(), 4ull * (64u << 20));
  EXPECT_EQ(bw.at("bursts"), 5);
  EXPECT_DOUBLE_EQ(bw.at("median_bytes_per_second").get<double>(), 3e10);
}

TEST(JsonReport, EveryKindHasItsArrayUnderItsOneName) {
  ProbeReport report;
  report.records.push_back(MakeLatency({3, 0, 1}, OkLatency()));
  const auto j = ReportToJson(report, k::Topology::FromSynthetic("pack:1 [numa] core:2 pu:1", {}).value(), Plan{});
  for (const char* name : {"latency", "bandwidth", "core_to_core"}) {
    ASSERT_TRUE(j.contains(name)) << name;
    EXPECT_TRUE(j.at(name).is_array()) << name;
  }
  EXPECT_FALSE(j.contains("c2c"));
  EXPECT_EQ(j.at("latency").size(), 1u);
  EXPECT_EQ(j.at("bandwidth").size(), 0u);
}

TEST(JsonReport, TopologyListsCpuLessNodesAndDistances) {
  const auto topo = k::Topology::FromSynthetic("pack:2 [numa] core:2 pu:1", {});
  ASSERT_TRUE(topo.ok()) << topo.failure().reason;
  const auto j = TopologyToJson(topo.value(), Plan{{{1, 0, 0}}, {}, {"a note"}});
  EXPECT_EQ(j.at("nodes").size(), 2u);
  EXPECT_EQ(j.at("cpus").size(), 4u);
  EXPECT_EQ(j.at("distances").at("nodes").size(), 2u);
  EXPECT_EQ(j.at("plan").at("memory_pairs").at(0).at("cpu"), 1);
  EXPECT_EQ(j.at("plan").at("notes").at(0), "a note");
}

}  // namespace
}  // namespace numaprobe::daemon
