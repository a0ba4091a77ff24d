// SPDX-License-Identifier: Apache-2.0
// Fixed Snapshots and lookups shared by metrics_test.cc and http_test.cc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "daemon/serve/results/derived.h"
#include "daemon/serve/snapshot.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {

inline Timed Latency(int cpu, int cpu_node, int mem_node, double median, double when = 1700000100) {
  kernels::LatencyResult r;
  r.cpu = cpu;
  r.seconds_per_load = {median, median * 0.95, median * 1.1, median * 0.02, 7};
  return {MakeLatency({cpu, cpu_node, mem_node}, r), when, 0};
}

inline Timed Bandwidth(std::vector<int> cpus, int cpu_node, int mem_node, kernels::BandwidthOp op, double median) {
  kernels::BandwidthResult r;
  const int cpu = cpus.front();
  r.op = op;
  r.cpus = std::move(cpus);
  r.bytes_per_second = {median, median * 0.9, median * 1.02, median * 0.01, 5};
  return {MakeBandwidth({cpu, cpu_node, mem_node}, r), 1700000200, 0};
}

// cpu_a's node: CPUs below 4 are on node 0 in these snapshots, the rest on 1.
inline Timed C2c(int a, int b, int line_node, kernels::CpuRelation relation, double median) {
  kernels::C2cResult r;
  r.cpu_a = a;
  r.cpu_b = b;
  r.one_way_seconds = {median, median * 0.9, median * 1.2, median * 0.03, 7};
  return {MakeC2c({a, b, line_node, relation}, a < 4 ? 0 : 1, r), 1700000300, 0};
}

// Two memory nodes (0, 1) and a CPU-only node 2. Pair 1 -> 0 is planned but
// has no figure (its last probe found the memory on the wrong node).
// The drift and peer figures the results model derives from the baseline and
// the medians (serve/results/derived.h), as the daemon publishes them.
inline Snapshot WithDerived(Snapshot s) {
  s.worst_drift = WorstDrift(s.baseline, s.recent_medians);
  s.remote_local_ratios = RemoteLocalRatios(s.peer_medians);
  return s;
}

inline Snapshot FixedSnapshot() {
  using kernels::BandwidthOp;
  using kernels::CpuRelation;
  Snapshot s;
  // HMAT: node 0 advertised to CPU initiators on node 0 (with write figures),
  // node 1 to any initiator on nodes 0-1 (no write figures).
  s.host = {"Example CPU 9000 @ 2.40GHz",
            "0xa0011d1",
            "6.1.0-13-amd64",
            "1.4.9",
            "madvise",
            "tsc",
            false,
            "none",
            "1",
            {{0, 1, {0}, 8.0e-8, 9.0e-8, 2.5e10, 1.5e10}, {1, 0, {0, 1}, 1.2e-7, std::nullopt, 1.0e10, std::nullopt}},
            std::nullopt};
  s.runtime_facts.fields = {{"thp_enabled", "madvise"},
                            {"thp_defrag", "madvise"},
                            {"numa_balancing", "0"},
                            {"cpufreq_governor.node0", "performance"},
                            {"cpufreq_epp.node0", "unknown"},
                            {"cmdline.mitigations", "off"},
                            {"cmdline.nohz_full", "unset"},
                            {"cmdline.other_hash", "9c1185a5c5e9fc54"},
                            {"node0.mem_total_bytes", "8589934592"},
                            {"node0.hugepages_2048kB", "16"},
                            {"edac_memory", "controllers=1 dimms=2 size_mib=32768 types=DDR4"}};
  s.runtime_facts.nodes = {{0, 8589934592ULL, {{2097152ULL, 16}, {1073741824ULL, 0}}}, {1, std::nullopt, {}}};
  s.runtime_facts.hardware_corrupted_bytes = 0;
  s.memory_errors_since_baseline = MemoryErrorCounts{3, 0};
  s.fingerprint = "3f2a9c1d5e7b4a60";
  s.distances = {{{0, 0}, 10}, {{0, 1}, 21}, {{1, 0}, 21}, {{1, 1}, 10}, {{2, 0}, 17}, {{2, 1}, 28}};
  s.probes = {"latency", "bandwidth", "core_to_core"};
  s.figures = {Latency(3, 0, 0, 0.9e-7),
               Latency(3, 0, 1, 1.35e-7),
               Latency(7, 1, 1, 0.95e-7),
               Latency(11, 2, 0, 1.1e-7),
               Bandwidth({3}, 0, 0, BandwidthOp::kRead, 2.0e10),
               Bandwidth({3}, 0, 0, BandwidthOp::kWrite, 1.2e10),
               Bandwidth({3}, 0, 0, BandwidthOp::kCopy, 1.6e10),
               Bandwidth({3}, 0, 1, BandwidthOp::kRead, 1.1e10),
               C2c(1, 3, 0, CpuRelation::kSameNode, 4.5e-8),
               C2c(3, 7, 0, CpuRelation::kCrossNode, 1.2e-7),
               C2c(3, 7, 1, CpuRelation::kCrossNode, 1.3e-7)};
  s.baseline = {{"latency", -1, 0, 0, "", 0.89e-7},
                {"latency", -1, 0, 1, "", 1.34e-7},
                {"bandwidth", -1, 0, 0, "read", 2.05e10}};
  s.baseline_origin = "restored";
  s.baseline_complete = true;
  s.baseline_spread = {{"latency", -1, 0, 0, "", 0.012},
                       {"latency", -1, 0, 1, "", 0.015},
                       {"bandwidth", -1, 0, 0, "read", 0.04}};
  s.host_changes = {{"kernel", "6.1.0-13-amd64", "6.6.13-amd64", 1700000050},
                    {"microcode", "0xa0011d0", "0xa0011d1", 1700000050},
                    {"thp_enabled", "always", "never", 1700000060},
                    {"thp_enabled", "never", "madvise", 1700000070}};
  s.recent_medians = {{"latency", -1, 0, 0, "", 0.9e-7}, {"bandwidth", -1, 0, 0, "read", 2.0e10}};
  s.refresh_interval_seconds = 300;
  s.runs_total = {{{"latency", "ok"}, 12},          {{"latency", "placement_mismatch"}, 1},
                  {{"latency", "coarse_clock"}, 2}, {{"bandwidth", "ok"}, 16},
                  {{"core_to_core", "ok"}, 9},      {{"core_to_core", "timeout"}, 0}};
  s.cpu_seconds_total = {{"latency", 1.25}, {"bandwidth", 3.5}, {"core_to_core", 0.375}};
  s.discards_total = {{{"latency", "context_switch"}, 3},
                      {{"latency", "migration"}, 0},
                      {{"core_to_core", "timeout"}, 1}};
  s.placement_failures_total = {{{0, "placement_unverified"}, 0}, {{0, "placement_mismatch"}, 1}};
  s.last_success = {{{"latency", 0, 0}, 1700000100},
                    {{"latency", 0, 1}, 1700000040},
                    {{"latency", 1, 1}, 1700000100},
                    {{"core_to_core", 0, 0}, 1700000300}};
  s.duty_cycle_ratio = 0.0018;
  s.duty_cycle_budget_ratio = 0.002;
  s.probe_config = {{"latency",
                     {{"page_size", "2MiB-thp"}, {"buffer_bytes", "268435456"}, {"stride", "128"}, {"mem_node", "0"}}},
                    {"core_to_core", {{"round_trips", "2000"}, {"samples", "7"}}}};
  s.config_reload_successful = true;
  s.config_reload_unix_seconds = 1700000000;
  s.rounds_completed = 4;
  s.probe_lock_wait_seconds = 0.25;
  s.baseline_progress = {3, 2, 0.4, 1700000010.0, 1700036010.0};
  return WithDerived(s);
}

// Per-CPU mode on node 0 (CPUs 2 and 3) with `threads` bandwidth threads.
inline Snapshot PerCpuSnapshot(int threads) {
  Snapshot s;
  s.figure_context = {true, threads};
  s.probes = {"latency", "bandwidth", "core_to_core"};
  s.distances = {{{0, 0}, 10}, {{0, 1}, 21}};
  s.figures = {Latency(2, 0, 0, 1.0e-7), Latency(2, 0, 1, 1.5e-7), Latency(3, 0, 0, 0.8e-7), Latency(3, 0, 1, 1.2e-7),
               Bandwidth(threads > 1 ? std::vector<int>{2, 3} : std::vector<int>{2}, 0, 1, kernels::BandwidthOp::kRead,
                         9e9)};
  s.baseline = {{"latency", 3, 0, 0, "", 0.8e-7}, {"bandwidth", 2, 0, 1, "read", 9.1e9}};
  s.baseline_spread = s.baseline;
  s.recent_medians = {{"latency", 3, 0, 0, "", 0.8e-7}, {"bandwidth", 2, 0, 1, "read", 9e9}};
  return WithDerived(s);
}

inline const prometheus::MetricFamily* Find(const std::vector<prometheus::MetricFamily>& families,
                                            const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

inline std::optional<std::string> LabelOf(const prometheus::ClientMetric& metric, const std::string& name) {
  for (const auto& label : metric.label) {
    if (label.name == name) return label.value;
  }
  return std::nullopt;
}

// The value of the series with exactly `labels`, if there is one.
inline std::optional<double> Value(const std::vector<prometheus::MetricFamily>& families, const std::string& name,
                                   const std::map<std::string, std::string>& labels) {
  const prometheus::MetricFamily* family = Find(families, name);
  if (family == nullptr) return std::nullopt;
  for (const auto& metric : family->metric) {
    std::map<std::string, std::string> have;
    for (const auto& label : metric.label) have[label.name] = label.value;
    if (have != labels) continue;
    return family->type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return std::nullopt;
}

}  // namespace numaprobe::daemon
