// SPDX-License-Identifier: Apache-2.0
// What the node feature file (serve/node_feature_export.h) costs the daemon,
// per call, on a snapshot of an 8-node host (every CPU node to every memory
// node: 64 latency and 128 peak figures, the most a daemon publishes there):
//   BM_NodeFeaturesOf      the features from the published records (every 30 s check)
//   BM_NodeFeatureWrite    the same plus the file replaced (rename + 2 fsyncs)
//                          in a directory on the file system of $TMPDIR
// Per hour at the default schedule: 120 checks and about 12 writes (the
// figures change every 5-minute round). Not a test: no thresholds.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "daemon/output/node_features.h"
#include "daemon/serve/node_feature_export.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

constexpr int kNodes = 8;

std::vector<Timed> EightNodeFigures() {
  std::vector<Timed> figures;
  for (int c = 0; c < kNodes; ++c) {
    for (int m = 0; m < kNodes; ++m) {
      const double distance = c == m ? 1.0 : 1.5 + 0.1 * ((c + m) % 4);
      figures.push_back({MakeLatencyFigure(c, m, 90e-9 * distance), 1});
      figures.push_back({MakePeakFigure(c, m, kernels::BandwidthOp::kRead, 100e9 / distance), 1});
      figures.push_back({MakePeakFigure(c, m, kernels::BandwidthOp::kWrite, 60e9 / distance), 1});
    }
  }
  return figures;
}

void BM_NodeFeaturesOf(benchmark::State& state) {
  std::vector<RecordPtr> records;
  for (const Timed& t : EightNodeFigures()) records.push_back(t.record);
  for (auto _ : state) benchmark::DoNotOptimize(NodeFeaturesOf(records, true));
}
BENCHMARK(BM_NodeFeaturesOf);

void BM_NodeFeatureWrite(benchmark::State& state) {
  std::string dir = (std::filesystem::temp_directory_path() / "numaprobe_bench_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  ResultStore store;
  store.Update([](Snapshot& s) {
    s.rounds_completed = 1;
    s.figures = EightNodeFigures();
  });
  NodeFeatureExport exporter(store);
  std::int64_t now_ns = 0;
  for (auto _ : state) {
    // A whole refresh interval later each time: every call writes.
    now_ns += 3'600'000'000'000;
    exporter.Tick(dir, 1'800'000'000, now_ns);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_NodeFeatureWrite)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace numaprobe::daemon

BENCHMARK_MAIN();
