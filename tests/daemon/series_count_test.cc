// SPDX-License-Identifier: Apache-2.0
// How many series one daemon exports on 2- to 16-node hosts, counted from the
// daemon's own code: the default plan (BuildPlan) on a synthetic topology,
// every planned task's figure published (RecordRun), a complete baseline with
// its spread and recent medians for every latency and bandwidth series, and
// the families BuildFamilies() renders from that Snapshot. The table printed
// here is the one in docs/detection.md ("Cost at fleet scale"); the test holds
// the goal there: an 8-node host no more series than node_exporter's usual
// 1,500-2,000. With NUMAPROBE_SERIES_DUMP_DIR set it also writes each host's
// exposition there (series-N.prom), the input of bench/rule_cost.py.
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/round_tasks.h"
#include "daemon/serve/snapshot_update.h"
#include "daemon/web/metrics.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

// A two-socket-like server per node: two last-level caches of four SMT cores.
kernels::Topology Server(int nodes) {
  auto topology = kernels::Topology::FromSynthetic("pack:" + std::to_string(nodes) +
                                                       " [numa(memory=64GiB)] l3:2(size=32MiB) core:4 pu:2",
                                                   {});
  EXPECT_TRUE(topology.ok()) << topology.failure().reason;
  return std::move(topology).value();
}

RecordPtr Success(const Task& task) {
  const std::string_view kind = task.kind->name();
  if (kind == "latency") {
    kernels::LatencyResult r;
    r.cpu = task.target.pair.cpu;
    r.seconds_per_load = {1e-7, 0.95e-7, 1.1e-7, 2e-9, 7};
    return MakeLatency(task.target.pair, r);
  }
  if (kind == "bandwidth") {
    kernels::BandwidthResult r;
    r.op = task.target.variant == "read"    ? kernels::BandwidthOp::kRead
           : task.target.variant == "write" ? kernels::BandwidthOp::kWrite
                                            : kernels::BandwidthOp::kCopy;
    r.cpus = {task.target.pair.cpu};
    r.bytes_per_second = {2e10, 1.9e10, 2.1e10, 1e8, 5};
    return MakeBandwidth(task.target.pair, r);
  }
  kernels::C2cResult r;
  r.cpu_a = task.target.pair.cpu;
  r.cpu_b = task.target.peer_cpu;
  r.one_way_seconds = {5e-8, 4.5e-8, 6e-8, 1e-9, 7};
  return std::make_shared<ProbeRecordOf<kernels::C2cResult>>(*task.kind, task.target, r);
}

struct Count {
  int total = 0;
  std::map<std::string, int> per_family;
};

// Every series of a host whose plan has been measured once, without host
// changes since its baseline (each adds at most one series per fact field).
Count SeriesOf(int nodes) {
  const kernels::Topology topology = Server(nodes);
  const Config config;
  auto plan = BuildPlan(PlanOptions{}, topology);
  EXPECT_TRUE(plan.ok()) << plan.failure().reason;
  Snapshot s;
  const HostInfo host{"Example CPU", "0x1", "6.1.0-13-amd64", "1.0", "madvise", "tsc", false, "none", "1", {}, {}};
  PlanSnapshot(s, config, topology, plan.value(), host, "fingerprint");
  for (const Task& task : RoundTasks(plan.value(), config, topology)) {
    const RecordPtr record = Success(task);
    RecordRun(s, record, 1700000000, 0.01);
    if (auto value = task.kind->BaselineOf(*record, config.targets.per_cpu)) {
      s.baseline.push_back(*value);
      s.baseline_spread.push_back(*value);
      s.recent_medians.push_back(*value);
      s.peer_medians.push_back(*value);
    }
  }
  s.baseline_complete = true;
  s.baseline_origin = "restored";
  s.rounds_completed = 1;
  const auto families = BuildFamilies(s);
  if (const char* dir = std::getenv("NUMAPROBE_SERIES_DUMP_DIR"); dir != nullptr) {
    std::ofstream out(std::filesystem::path(dir) / ("series-" + std::to_string(nodes) + ".prom"));
    prometheus::TextSerializer().Serialize(out, families);
  }
  Count count;
  for (const auto& family : families) {
    count.per_family[family.name] = static_cast<int>(family.metric.size());
    count.total += static_cast<int>(family.metric.size());
  }
  return count;
}

TEST(SeriesCount, PerHostOnTwoToSixteenNodes) {
  std::printf("| nodes | memory pairs | series (numaprobe_*) | of which in families with a series per pair |\n");
  for (int nodes : {2, 4, 8, 16}) {
    const Count count = SeriesOf(nodes);
    int per_pair = 0;
    for (const auto& [name, n] : count.per_family) per_pair += n >= nodes * nodes ? n : 0;
    std::printf("| %d | %d | %d | %d |\n", nodes, nodes * nodes, count.total, per_pair);
    if (nodes == 8) {
      for (const auto& [name, n] : count.per_family) std::printf("  %-60s %d\n", name.c_str(), n);
      EXPECT_LE(count.total, 2000) << "an 8-node host exports more series than node_exporter";
    }
  }
}

}  // namespace
}  // namespace numaprobe::daemon
