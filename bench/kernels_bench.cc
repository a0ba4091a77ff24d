// SPDX-License-Identifier: Apache-2.0
// Google Benchmark micro-benchmarks of the kernels (not tests: no thresholds).
//   BM_Chase/<bytes>      dependent loads over an L1-sized and a >LLC buffer;
//                         counter ns_per_load
//   BM_Bandwidth{Read,Write,Copy}  one MeasureBandwidth() estimate per
//                         iteration; bytes_per_second from the kernel's own
//                         median, plus the estimate's CPU cost (cpu_ms)
//   BM_C2c                one MeasureCoreToCore() on CPUs 0 and 1; one_way_ns
// Buffers are built once per size and reused, as the daemon does: building
// them (allocate, pre-fault, verify, link) is not what is measured.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <thread>

#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/chase.h"
#include "kernels/clock.h"
#include "kernels/latency.h"
#include "kernels/pin.h"

namespace numaprobe::kernels {
namespace {

constexpr int kCpu = 0;
constexpr std::uint64_t kLoadsPerIteration = 100'000;

LatencyBuffer* ChaseBuffer(std::size_t bytes) {
  static std::map<std::size_t, std::unique_ptr<LatencyBuffer>> buffers;
  auto& slot = buffers[bytes];
  if (slot == nullptr) {
    LatencyBufferSpec spec;
    spec.mem_node = 0;
    spec.bytes = bytes;
    // 64 B stride in L1: every line of a 32 KiB buffer is a distinct element.
    spec.stride = bytes <= (1u << 20) ? 64 : 128;
    auto buffer = LatencyBuffer::Create(spec);
    if (buffer) slot = std::make_unique<LatencyBuffer>(std::move(buffer).value());
  }
  return slot.get();
}

void BM_Chase(benchmark::State& state) {
  LatencyBuffer* buffer = ChaseBuffer(static_cast<std::size_t>(state.range(0)));
  if (buffer == nullptr) return state.SkipWithError("cannot build the chase buffer");
  if (const std::string err = PinCurrentThread(kCpu); !err.empty()) return state.SkipWithError(err.c_str());
  void* cursor = Chase(buffer->cursor(), kLoadsPerIteration);  // warm the TLB and the frequency
  std::int64_t ns = 0;
  for (auto _ : state) {
    const std::int64_t t0 = MonotonicNs();
    cursor = Chase(cursor, kLoadsPerIteration);
    const std::int64_t t1 = MonotonicNs();
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    ns += t1 - t0;
  }
  buffer->cursor() = cursor;
  state.counters["ns_per_load"] =
      static_cast<double>(ns) / static_cast<double>(state.iterations() * kLoadsPerIteration);
  state.SetLabel(PageSizeName(buffer->info()));
}
BENCHMARK(BM_Chase)->Arg(32 << 10)->Arg(256 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);

BandwidthBuffer* BandwidthBufferOnce() {
  static std::unique_ptr<BandwidthBuffer> buffer = [] {
    auto created = BandwidthBuffer::Create({0, 512u << 20, PagePolicy::kAuto});
    return created ? std::make_unique<BandwidthBuffer>(std::move(created).value()) : nullptr;
  }();
  return buffer.get();
}

// Manual time = the accepted bursts' time (bytes / median rate), so the
// reported bytes_per_second is the kernel's own estimate, not diluted by the
// warm-up and barrier overhead (which cpu_ms shows instead).
void BandwidthBench(benchmark::State& state, BandwidthOp op) {
  BandwidthBuffer* buffer = BandwidthBufferOnce();
  if (buffer == nullptr) return state.SkipWithError("cannot allocate the bandwidth buffer");
  BandwidthRunSpec spec;
  spec.cpus = {kCpu};
  spec.op = op;
  std::int64_t bytes = 0;
  double cpu_seconds = 0;
  for (auto _ : state) {
    const BandwidthResult r = MeasureBandwidth(*buffer, spec);
    if (r.outcome != Outcome::kOk) return state.SkipWithError(r.reason.c_str());
    state.SetIterationTime(static_cast<double>(r.bytes_total) / r.bytes_per_second.median);
    bytes += static_cast<std::int64_t>(r.bytes_total);
    cpu_seconds += r.cpu_seconds;
  }
  state.SetBytesProcessed(bytes);
  state.counters["cpu_ms"] = cpu_seconds * 1e3 / static_cast<double>(state.iterations());
  state.SetLabel(std::string(IsaName(ResolveIsa(spec.isa))));
}
void BM_BandwidthRead(benchmark::State& state) { BandwidthBench(state, BandwidthOp::kRead); }
void BM_BandwidthWrite(benchmark::State& state) { BandwidthBench(state, BandwidthOp::kWrite); }
void BM_BandwidthCopy(benchmark::State& state) { BandwidthBench(state, BandwidthOp::kCopy); }
BENCHMARK(BM_BandwidthRead)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BandwidthWrite)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BandwidthCopy)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_C2c(benchmark::State& state) {
  if (std::thread::hardware_concurrency() < 2) return state.SkipWithError("needs CPUs 0 and 1");
  C2cSpec spec;
  spec.cpu_a = 0;
  spec.cpu_b = 1;
  spec.line_node = 0;
  double one_way = 0;
  double cpu_seconds = 0;
  for (auto _ : state) {
    const C2cResult r = MeasureCoreToCore(spec);
    if (r.outcome != Outcome::kOk) return state.SkipWithError(r.reason.c_str());
    one_way += r.one_way_seconds.median;
    cpu_seconds += r.cpu_seconds;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["one_way_ns"] = one_way * 1e9 / n;
  state.counters["cpu_ms"] = cpu_seconds * 1e3 / n;
}
BENCHMARK(BM_C2c)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace numaprobe::kernels

BENCHMARK_MAIN();
