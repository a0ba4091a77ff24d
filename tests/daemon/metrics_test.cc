// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/metrics.cc, metrics_health.cc, metrics_process.cc and
// family_builder.cc: the metric contract.
//
// The golden file tests/fixtures/metrics.golden is the exact text exposition
// of BuildFamilies() for FixedSnapshot() below (build_info's version,
// revision, branch and compiler replaced by VERSION, REVISION, BRANCH and
// COMPILER). After an intended change to the metrics, regenerate it and
// review the diff:
//
//   NUMAPROBE_UPDATE_GOLDEN=1 build/release/tests/daemon/daemon_test --gtest_filter='Metrics.Golden*'
//
// The promtool test lints the same text with `promtool check metrics` (Debian
// package `prometheus`); without promtool it is skipped, or fails when CI=true.
#include "daemon/web/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <thread>
#include <vector>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "daemon/common/version.h"
#include "tests/daemon/metrics_test_util.h"
#include "tests/daemon/proc_self_stat.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;

std::string Serialize(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

// The build's version, revision, branch and compiler change from build to
// build, the golden must not.
std::string Normalized(std::string text) {
  ReplaceAll(text, "revision=\"" + std::string(kRevision) + "\"", "revision=\"REVISION\"");
  ReplaceAll(text, "version=\"" + std::string(kVersion) + "\"", "version=\"VERSION\"");
  ReplaceAll(text, "branch=\"" + std::string(kBranch) + "\"", "branch=\"BRANCH\"");
  ReplaceAll(text, "compiler=\"" + std::string(kCompiler) + "\"", "compiler=\"COMPILER\"");
  return text;
}

std::filesystem::path GoldenPath() { return std::filesystem::path(NUMAPROBE_FIXTURES) / "metrics.golden"; }

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Metrics, GoldenFile) {
  const std::string actual = Normalized(Serialize(BuildFamilies(FixedSnapshot())));
  const std::filesystem::path golden = GoldenPath();
  if (const char* update = std::getenv("NUMAPROBE_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing; run with NUMAPROBE_UPDATE_GOLDEN=1";
  EXPECT_EQ(ReadFile(golden), actual) << "metrics changed; if intended, regenerate " << golden
                                      << " with NUMAPROBE_UPDATE_GOLDEN=1 and review the diff";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

// Runs `command` with `input` on stdin; stdout and stderr are captured.
CommandResult RunCommand(const std::string& command, const std::string& input) {
  char path[] = "/tmp/numaprobe_metrics_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  close(fd);
  std::ofstream(path) << input;
  CommandResult result;
  if (FILE* pipe = popen((command + " < " + path + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::remove(path);
  return result;
}

TEST(Metrics, PromtoolCheckMetricsReportsNothing) {
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (access(kPromtool, X_OK) != 0) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") FAIL() << kPromtool << " missing (install Debian's prometheus)";
    GTEST_SKIP() << kPromtool << " missing (install Debian's prometheus package to lint metrics)";
  }
  // The golden snapshot, the per-CPU/threads variant, the process families and
  // the server's counters: everything a scrape can contain.
  ResultStore store;
  store.Update([](Snapshot& s) { s = FixedSnapshot(); });
  const TlsHandshakeFailures tls_failures;
  for (const std::string& text : {MetricsText(store, &tls_failures).Render(),
                                  Serialize(BuildFamilies(PerCpuSnapshot(2))), Serialize(BuildFamilies({}))}) {
    const CommandResult result = RunCommand(std::string(kPromtool) + " check metrics", text);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.output, "") << text;
  }
}

TEST(Metrics, TextIsRenderedPerSnapshotAndFollowsUpdates) {
  ResultStore store;
  store.Update([](Snapshot& s) { s = FixedSnapshot(); });
  const MetricsText metrics(store);
  const std::string first = metrics.Render();
  EXPECT_NE(first.find("numaprobe_duty_cycle_budget_ratio 0.002"), std::string::npos) << first;
  EXPECT_NE(first.find("process_resident_memory_bytes"), std::string::npos);
  store.Update([](Snapshot& s) { s.duty_cycle_budget_ratio = 0.01; });
  const std::string second = metrics.Render();
  EXPECT_EQ(second.find("numaprobe_duty_cycle_budget_ratio 0.002"), std::string::npos);
  EXPECT_NE(second.find("numaprobe_duty_cycle_budget_ratio 0.01"), std::string::npos);
}

// The process_* text of a rendered scrape.
std::string ProcessPart(const std::string& text) { return text.substr(text.find("# HELP process_")); }

TEST(Metrics, ProcessFamiliesAreReadAtMostOncePerReuseWindow) {
  NUMAPROBE_SKIP_WITHOUT_REAL_PROC_SELF_STAT();
  ResultStore store;
  const MetricsText metrics(store);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string first = ProcessPart(metrics.Render());
  // 64 MiB more resident memory: a fresh reading would differ.
  std::vector<char> ballast(64u << 20, 1);
  const std::string second = ProcessPart(metrics.Render());
  // Within the window only if this thread got there in time: on a machine
  // busy enough that touching 64 MiB took longer than the window, the second
  // scrape rightly reads /proc again and there is nothing to judge.
  if (std::chrono::steady_clock::now() - t0 >= std::chrono::nanoseconds(MetricsText::kProcessReuseNs)) {
    GTEST_SKIP() << "machine busy: the two scrapes were not within the reuse window";
  }
  EXPECT_EQ(second, first) << "scrapes within the window re-read /proc";
  std::this_thread::sleep_for(std::chrono::nanoseconds(MetricsText::kProcessReuseNs) + std::chrono::milliseconds(50));
  EXPECT_NE(ProcessPart(metrics.Render()), first) << "the reading was not refreshed after the window";
  EXPECT_EQ(ballast[12345], 1);
}

TEST(Metrics, RemoteLocalRatioDividesByTheLocalPairOfTheCpuNode) {
  const auto families = BuildFamilies(FixedSnapshot());
  const char* ratio = "numaprobe_memory_latency_remote_local_ratio";
  EXPECT_DOUBLE_EQ(*Value(families, ratio, {{"cpu_node", "0"}, {"mem_node", "1"}}), 1.35e-7 / 0.9e-7);
  EXPECT_DOUBLE_EQ(*Value(families, ratio, {{"cpu_node", "0"}, {"mem_node", "0"}}), 1.0);
  EXPECT_DOUBLE_EQ(*Value(families, ratio, {{"cpu_node", "1"}, {"mem_node", "1"}}), 1.0);
  // Node 2 has CPUs but no memory of its own: no reference, so no ratio.
  EXPECT_TRUE(Value(families, "numaprobe_memory_latency_seconds", {{"cpu_node", "2"}, {"mem_node", "0"}}));
  EXPECT_FALSE(Value(families, ratio, {{"cpu_node", "2"}, {"mem_node", "0"}}));
}

TEST(Metrics, PairAbsentFromTheSnapshotHasNoLatencySeries) {
  const auto families = BuildFamilies(FixedSnapshot());
  // 1 -> 0 is planned (it has a distance) but its last probe found the memory
  // elsewhere, so the snapshot holds no figure for it.
  EXPECT_TRUE(Value(families, "numaprobe_numa_distance", {{"cpu_node", "1"}, {"mem_node", "0"}}));
  for (const char* name : {"numaprobe_memory_latency_seconds", "numaprobe_memory_latency_spread_seconds",
                           "numaprobe_memory_latency_min_seconds", "numaprobe_memory_latency_remote_local_ratio"}) {
    EXPECT_FALSE(Value(families, name, {{"cpu_node", "1"}, {"mem_node", "0"}})) << name;
  }
}

TEST(Metrics, PerCpuModeAddsTheCpuLabelAndRatiosPerCpu) {
  const auto families = BuildFamilies(PerCpuSnapshot(1));
  const char* latency = "numaprobe_memory_latency_seconds";
  EXPECT_DOUBLE_EQ(*Value(families, latency, {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}}), 1.5e-7);
  EXPECT_DOUBLE_EQ(*Value(families, latency, {{"cpu", "3"}, {"cpu_node", "0"}, {"mem_node", "1"}}), 1.2e-7);
  // Each CPU against its own local figure, not the node's.
  const char* ratio = "numaprobe_memory_latency_remote_local_ratio";
  EXPECT_DOUBLE_EQ(*Value(families, ratio, {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}}), 1.5 / 1.0);
  EXPECT_DOUBLE_EQ(*Value(families, ratio, {{"cpu", "3"}, {"cpu_node", "0"}, {"mem_node", "1"}}), 1.2 / 0.8);
  EXPECT_TRUE(Value(families, "numaprobe_memory_bandwidth_bytes_per_second",
                    {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}, {"op", "read"}}));
  EXPECT_TRUE(Value(families, "numaprobe_memory_latency_baseline_seconds",
                    {{"cpu", "3"}, {"cpu_node", "0"}, {"mem_node", "0"}}));
  for (const MetricFamily& family : families) {
    // The baseline is per node pair; the worst drift is one per host.
    if (family.name.rfind("numaprobe_memory_latency", 0) != 0 || family.name.find("baseline") != std::string::npos ||
        family.name.find("worst_pair") != std::string::npos) {
      continue;
    }
    for (const auto& metric : family.metric) EXPECT_TRUE(LabelOf(metric, "cpu")) << family.name;
  }
}

TEST(Metrics, ThreadsLabelOnlyWithMoreThanOneThread) {
  const char* bandwidth = "numaprobe_memory_bandwidth_bytes_per_second";
  for (const MetricFamily& family : BuildFamilies(FixedSnapshot())) {
    for (const auto& metric : family.metric) EXPECT_FALSE(LabelOf(metric, "threads")) << family.name;
  }
  const auto families = BuildFamilies(PerCpuSnapshot(2));
  EXPECT_DOUBLE_EQ(*Value(families, bandwidth,
                          {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}, {"op", "read"}, {"threads", "2"}}),
                   9e9);
  EXPECT_TRUE(Value(families, "numaprobe_memory_bandwidth_baseline_bytes_per_second",
                    {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}, {"op", "read"}, {"threads", "2"}}));
  EXPECT_TRUE(Value(families, "numaprobe_memory_bandwidth_baseline_spread_ratio",
                    {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}, {"op", "read"}, {"threads", "2"}}));
  // The smoothed figure carries the threads label of the figure itself.
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_bandwidth_recent_median_bytes_per_second",
                          {{"cpu", "2"}, {"cpu_node", "0"}, {"mem_node", "1"}, {"op", "read"}, {"threads", "2"}}),
                   9e9);
  for (const char* name : {"numaprobe_memory_bandwidth_recent_median_bytes_per_second",
                           "numaprobe_memory_bandwidth_baseline_spread_ratio"}) {
    for (const MetricFamily& family : BuildFamilies(PerCpuSnapshot(1))) {
      if (family.name != name) continue;
      ASSERT_FALSE(family.metric.empty()) << name;
      for (const auto& metric : family.metric) EXPECT_FALSE(LabelOf(metric, "threads")) << name;
    }
  }
}

TEST(Metrics, BaselineSpreadRecentMediansAndHostChanges) {
  const auto families = BuildFamilies(FixedSnapshot());
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_latency_baseline_spread_ratio",
                          {{"cpu_node", "0"}, {"mem_node", "1"}}),
                   0.015);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_latency_recent_median_seconds",
                          {{"cpu_node", "0"}, {"mem_node", "0"}}),
                   0.9e-7);
  EXPECT_FALSE(
      Value(families, "numaprobe_memory_latency_recent_median_seconds", {{"cpu_node", "0"}, {"mem_node", "1"}}))
      << "a series with fewer than 3 figures has no smoothed figure";
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_host_change_timestamp_seconds",
                          {{"field", "kernel"}, {"before", "6.1.0-13-amd64"}, {"after", "6.6.13-amd64"}}),
                   1700000050);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_refresh_interval_seconds", {}), 300);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_test_fault_injection_active", {}), 0);
  Snapshot faked = FixedSnapshot();
  faked.test_fault_injection_active = true;
  EXPECT_DOUBLE_EQ(*Value(BuildFamilies(faked), "numaprobe_test_fault_injection_active", {}), 1);
}

// The newest host change as one label, what Alertmanager groups a rollout's
// drift alerts by: the fields first seen changed at the newest moment, sorted
// and joined; an older change of another field stays out of it.
TEST(Metrics, LastHostChangeNamesEveryFieldSeenChangedAtTheNewestMoment) {
  Snapshot s = FixedSnapshot();
  s.host_changes = {{"thp_enabled", "always", "never", 1700000010},
                    {"microcode", "0xa0011d0", "0xa0011d1", 1700000050},
                    {"kernel", "6.1.0-13-amd64", "6.6.13-amd64", 1700000050}};
  auto families = BuildFamilies(s);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_host_last_change_timestamp_seconds",
                          {{"change", "kernel 6.1.0-13-amd64 -> 6.6.13-amd64, microcode 0xa0011d0 -> 0xa0011d1"}}),
                   1700000050);
  // A field changed again later is the newest change by itself.
  s.host_changes.push_back({"thp_enabled", "never", "madvise", 1700000090});
  families = BuildFamilies(s);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_host_last_change_timestamp_seconds",
                          {{"change", "thp_enabled never -> madvise"}}),
                   1700000090);
  s.host_changes.clear();
  for (const MetricFamily& family : BuildFamilies(s)) {
    if (family.name == "numaprobe_host_last_change_timestamp_seconds") {
      EXPECT_TRUE(family.metric.empty()) << "no change since the baseline, no series";
    }
  }
}

// One series a probe, valued at its least recently refreshed pair: what
// NumaProbeProbeStale reads instead of every pair's timestamp.
TEST(Metrics, OldestSuccessPerProbeIsItsStalestPair) {
  Snapshot s = FixedSnapshot();
  s.last_success = {{{"latency", 0, 0}, 1700000100},
                    {{"latency", 0, 1}, 1700000040},
                    {{"latency", 1, 1}, 1700000300},
                    {{"core_to_core", 0, 0}, 1700000300}};
  const auto families = BuildFamilies(s);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_probe_oldest_success_timestamp_seconds", {{"probe", "latency"}}),
                   1700000040);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_probe_oldest_success_timestamp_seconds", {{"probe", "core_to_core"}}),
                   1700000300);
  EXPECT_FALSE(Value(families, "numaprobe_probe_oldest_success_timestamp_seconds", {{"probe", "bandwidth"}}))
      << "a probe with no success yet has no oldest success (as it has no pair timestamp)";
}

// The worst pair's recent median over its baseline, per kind and op: the
// highest for latency, the lowest for bandwidth; per-CPU values are reduced
// to the node pair's median first, as quantile(0.5) over the CPUs would.
TEST(Metrics, WorstPairDriftIsTheWorstRatioOfTheNodePairMedians) {
  Snapshot s = FixedSnapshot();
  s.baseline = {{"latency", 2, 0, 1, "", 1.0e-7},       {"latency", 3, 0, 1, "", 1.2e-7},
                {"latency", -1, 1, 1, "", 1.0e-7},      {"latency", -1, 1, 0, "", 1.0e-7},
                {"bandwidth", -1, 0, 0, "read", 2e10},  {"bandwidth", -1, 0, 1, "read", 1e10},
                {"bandwidth", -1, 0, 0, "write", 1e10}, {"bandwidth", -1, 0, 1, "copy", 1e10}};
  s.recent_medians = {{"latency", 2, 0, 1, "", 1.2e-7},        {"latency", 3, 0, 1, "", 1.3e-7},
                      {"latency", -1, 1, 1, "", 1.05e-7},      {"bandwidth", -1, 0, 0, "read", 1.9e10},
                      {"bandwidth", -1, 0, 1, "read", 0.8e10}, {"bandwidth", -1, 0, 0, "write", 1.1e10}};
  const auto families = BuildFamilies(WithDerived(s));
  // Pair 0->1: median of 1.2 and 1.3 over median of 1.0 and 1.2 = 1.25 / 1.1;
  // pair 1->1: 1.05; pair 1->0 has no recent median.
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_latency_worst_pair_drift_ratio", {}), 1.25 / 1.1);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_bandwidth_worst_pair_drift_ratio", {{"op", "read"}}), 0.8);
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_bandwidth_worst_pair_drift_ratio", {{"op", "write"}}), 1.1);
  EXPECT_FALSE(Value(families, "numaprobe_memory_bandwidth_worst_pair_drift_ratio", {{"op", "copy"}}))
      << "no pair of the op has a recent median yet";

  s.baseline.clear();
  EXPECT_FALSE(Value(BuildFamilies(WithDerived(s)), "numaprobe_memory_latency_worst_pair_drift_ratio", {}))
      << "no drift while the baseline is still being recorded";
}

// Per remote pair, its peer median (of the last 9 figures) over the local
// pair's of its CPU node (per-CPU values reduced to the node pair's median
// first), with the cohort labels that numaprobe_host_info carries too: the
// peer alert's input. The recent medians (of 5) are not what it reads.
TEST(Metrics, RemoteLocalRatioOfPeerMediansCarriesTheCohort) {
  Snapshot s = FixedSnapshot();
  s.peer_medians = {{"latency", 2, 0, 0, "", 1.0e-7},     {"latency", 3, 0, 0, "", 1.2e-7},
                    {"latency", 2, 0, 1, "", 2.2e-7},     {"latency", 3, 0, 1, "", 2.2e-7},
                    {"latency", -1, 2, 0, "", 1.5e-7},    {"latency", -1, 1, 1, "", 1.0e-7},
                    {"bandwidth", -1, 0, 1, "read", 1e10}};
  s.recent_medians = {{"latency", -1, 0, 0, "", 1.0e-7}, {"latency", -1, 0, 1, "", 3.0e-7}};
  const auto families = BuildFamilies(WithDerived(s));
  const Labels cohort{{"cpu_model", "Example CPU 9000 @ 2.40GHz"}, {"numa_nodes", "2"}, {"numa_distance_sum", "107"}};
  Labels pair = cohort;
  pair.insert({{"cpu_node", "0"}, {"mem_node", "1"}});
  // 2.2 over the median of 1.0 and 1.2.
  EXPECT_DOUBLE_EQ(*Value(families, "numaprobe_memory_latency_recent_remote_local_ratio", pair), 2.2 / 1.1);
  const MetricFamily& ratio = *Find(families, "numaprobe_memory_latency_recent_remote_local_ratio");
  EXPECT_EQ(ratio.metric.size(), 1u) << "local pairs (ratio 1 everywhere) and node 2 (no local memory) have none";
  const MetricFamily& host = *Find(families, "numaprobe_host_info");
  for (const auto& [name, value] : cohort) EXPECT_EQ(*LabelOf(host.metric.at(0), name), value) << name;

  s.peer_medians.erase(s.peer_medians.begin(), s.peer_medians.begin() + 2);
  EXPECT_TRUE(Find(BuildFamilies(WithDerived(s)), "numaprobe_memory_latency_recent_remote_local_ratio")->metric.empty())
      << "no ratio while the local pair has no peer median, whatever its recent median";
}

TEST(Metrics, SeriesAreInNumericOrderAndNeverDuplicated) {
  Snapshot s = FixedSnapshot();
  s.distances[{10, 10}] = 10;
  s.distances[{2, 10}] = 32;
  Timed newer = C2c(1, 3, 0, kernels::CpuRelation::kSameNode, 9e-8);  // a repeated pair must not repeat the series
  newer.unix_seconds += 1;
  s.figures.push_back(newer);
  const auto families = BuildFamilies(s);
  const MetricFamily& distance = *Find(families, "numaprobe_numa_distance");
  EXPECT_EQ(*LabelOf(distance.metric.back(), "cpu_node"), "10");
  const auto& before_last = distance.metric[distance.metric.size() - 2];  // {2,10}: after {2,1}, before {10,10}
  EXPECT_EQ(*LabelOf(before_last, "cpu_node"), "2");
  EXPECT_EQ(*LabelOf(before_last, "mem_node"), "10");
  const MetricFamily& c2c = *Find(families, "numaprobe_core_to_core_latency_seconds");
  EXPECT_EQ(c2c.metric.size(), FixedSnapshot().FiguresOf(CoreToCoreProbe()).size());
  EXPECT_DOUBLE_EQ(*Value(families, c2c.name,
                          {{"cpu_a", "1"}, {"cpu_b", "3"}, {"line_node", "0"}, {"relation", "same_node"}}),
                   9e-8);  // the newer result wins
  for (const MetricFamily& family : families) EXPECT_EQ(family.metric.empty() ? 0 : family.metric[0].timestamp_ms, 0);
}

TEST(Metrics, ProcessFamiliesFromThisProcess) {
  NUMAPROBE_SKIP_WITHOUT_REAL_PROC_SELF_STAT();
  const auto families = ProcessMetrics().Families();
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_start_time_seconds", "process_open_fds", "process_max_fds", "process_threads"}) {
    ASSERT_TRUE(Value(families, name, {})) << name;
  }
  EXPECT_GT(*Value(families, "process_resident_memory_bytes", {}), 1 << 20);
  EXPECT_GE(*Value(families, "process_threads", {}), 1);
  EXPECT_GE(*Value(families, "process_open_fds", {}), 3);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_NEAR(*Value(families, "process_start_time_seconds", {}), now, 3600);
}

TEST(Metrics, ProcessFamiliesFromAFixtureTree) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("numaprobe_proc_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "self/fd");
  for (const char* fd : {"0", "1", "2", "7"}) std::ofstream(root / "self/fd" / fd) << "";
  // comm with spaces and parentheses; utime 250, stime 50, threads 6,
  // starttime 1000 ticks, vsize 1 GiB, rss 2560 pages.
  std::ofstream(root / "self/stat") << "42 (numa (probe) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 6 0 "
                                       "1000 1073741824 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3\n";
  std::ofstream(root / "stat") << "cpu  1 2 3\nbtime 1700000000\nprocesses 5\n";
  const auto families = ProcessMetrics(root.string()).Families();
  std::filesystem::remove_all(root);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(*Value(families, "process_cpu_seconds_total", {}), 300 / ticks);
  EXPECT_DOUBLE_EQ(*Value(families, "process_threads", {}), 6);
  EXPECT_DOUBLE_EQ(*Value(families, "process_start_time_seconds", {}), 1700000000 + 1000 / ticks);
  EXPECT_DOUBLE_EQ(*Value(families, "process_virtual_memory_bytes", {}), 1073741824);
  EXPECT_DOUBLE_EQ(*Value(families, "process_resident_memory_bytes", {}), 2560.0 * sysconf(_SC_PAGESIZE));
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  EXPECT_DOUBLE_EQ(*Value(families, "process_max_fds", {}), static_cast<double>(files.rlim_cur));  // not from procfs
  EXPECT_DOUBLE_EQ(*Value(families, "process_open_fds", {}), 4);
  EXPECT_EQ(Find(families, "process_cpu_seconds_total")->type, prometheus::MetricType::Counter);
}

}  // namespace
}  // namespace numaprobe::daemon

namespace numaprobe::daemon {
namespace {

// loaded_latency is on demand: a daemon that does not probe it exports none
// of its families; one that does, exports them even before the first figure.
TEST(Metrics, OnlyKindsTheDaemonProbesPublishFamilies) {
  Snapshot s = FixedSnapshot();
  EXPECT_EQ(Find(BuildFamilies(s), "numaprobe_loaded_latency_seconds"), nullptr);
  s.probes.insert("loaded_latency");
  const auto families = BuildFamilies(s);
  ASSERT_NE(Find(families, "numaprobe_loaded_latency_seconds"), nullptr);
  EXPECT_TRUE(Find(families, "numaprobe_loaded_latency_seconds")->metric.empty());
  EXPECT_NE(Find(families, "numaprobe_loaded_latency_load_bytes_per_second"), nullptr);
}

}  // namespace
}  // namespace numaprobe::daemon
