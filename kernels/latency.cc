// SPDX-License-Identifier: Apache-2.0
#include "kernels/latency.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/adaptive_sampling.h"
#include "kernels/cache_flush.h"
#include "kernels/clock.h"
#include "kernels/pin.h"
#include "kernels/placement.h"
#include "kernels/stats.h"
#include "kernels/thread_start.h"
#include "kernels/timer_resolution.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kMinDefaultBytes = 16u << 20;
constexpr std::size_t kMaxDefaultBytes = std::size_t{2} << 30;
constexpr std::size_t kMinStride = 64;
constexpr std::size_t kMaxStride = 4096;

// The body of MeasureLatency, run on its own pinned thread.
void RunPinned(LatencyBuffer& buffer, const LatencyRunSpec& spec, LatencyResult& result) {
  const std::int64_t cpu_start = ThreadCpuNs();
  auto finish = [&](Outcome outcome, std::string reason) {
    result.outcome = outcome;
    result.reason = std::move(reason);
    result.cpu_seconds = static_cast<double>(ThreadCpuNs() - cpu_start) / 1e9;
  };

  if (std::string err = PinCurrentThread(spec.cpu); !err.empty()) {
    return finish(Outcome::kPinFailed, std::move(err));
  }
  // A different subset each run, so repeated runs cover the whole buffer.
  const auto seed = static_cast<std::uint64_t>(MonotonicNs());
  const PlacementReport& placement = buffer.arena().Reverify(spec.reverify_pages, seed);
  result.buffer = buffer.info();
  if (!placement.verified()) {
    Failure failure = PlacementFailure(placement);
    return finish(failure.outcome, std::move(failure.reason));
  }

  void*& cursor = buffer.cursor();
  cursor = Chase(cursor, spec.warmup_loads);

  // Measured here, on the measuring CPU: the step is the clock's as this CPU reads it.
  TimerCheck timer = TimerCheck::Start(spec.clock_step_ns);
  SampleGuard guard;
  const SamplingResult sampled = SampleAdaptively(
      {spec.samples, spec.loads_per_sample, spec.max_attempts, spec.max_wall_ns, spec.stop}, timer,
      [&](std::uint64_t loads) -> std::optional<std::int64_t> {
        if (buffer.flushed()) buffer.Flush();
        guard.Begin();
        const std::int64_t t0 = SampleClockNs();
        cursor = Chase(cursor, loads);
        const std::int64_t t1 = SampleClockNs();
        if (!guard.Clean(result.discards)) return std::nullopt;
        return t1 - t0;
      },
      MonotonicNs);
  result.attempts = sampled.attempts;
  result.shortest_sample_loads = sampled.shortest_units;
  result.longest_sample_loads = sampled.longest_units;
  result.clock = timer.report();
  const std::vector<double>& samples = sampled.per_unit;
  const std::string cpu = "cpu " + std::to_string(spec.cpu);
  if (sampled.cancelled) {
    return finish(Outcome::kCancelled, "stop requested after " + std::to_string(samples.size()) + " samples");
  }
  if (std::ssize(samples) < spec.samples && sampled.clock_limited) {
    // The clock, not the machine, kept the run from its samples: samples long
    // enough to time would cost more than the run's CPU cap (or its deadline).
    const int cap = spec.max_attempts > 0 ? spec.max_attempts : 3 * spec.samples;
    result.clock.shortest_sample_seconds = static_cast<double>(sampled.too_short_ns) * 1e-9;
    return finish(Outcome::kCoarseClock, cpu + ": " + timer.Describe(sampled.too_short_ns) + "; " +
                                             std::to_string(spec.samples) + " samples of " +
                                             std::to_string(sampled.needed_units) + " loads do not fit the cap of " +
                                             std::to_string(cap) + " x " + std::to_string(spec.loads_per_sample) +
                                             " loads and " + std::to_string(spec.max_wall_ns / 1'000'000) + " ms");
  }
  if (std::ssize(samples) < spec.samples) {
    // What ended the run: the CPU cap, or the wall-clock deadline (a CPU
    // taken away between samples, as a busy host or a hypervisor does,
    // leaves no trace in the counts).
    const std::string ended =
        sampled.deadline_passed ? " before the " + std::to_string(spec.max_wall_ns / 1'000'000) + " ms deadline" : "";
    return finish(Outcome::kDisturbed, cpu + ": only " + std::to_string(samples.size()) + " of " +
                                           std::to_string(spec.samples) + " samples undisturbed in " +
                                           std::to_string(result.attempts) + " attempts" + ended + " (" +
                                           std::to_string(result.discards.context_switch) + " context switches, " +
                                           std::to_string(result.discards.migration) + " migrations)");
  }
  result.seconds_per_load = Summarize(samples);
  finish(Outcome::kOk, "");
}

}  // namespace

std::size_t DefaultLatencyBufferBytes(std::uint64_t loads_per_sample, std::size_t stride) {
  const std::size_t wanted = static_cast<std::size_t>(2 * loads_per_sample) * std::max(stride, kMinStride);
  const std::size_t rounded = (wanted + kHugeWindowBytes - 1) / kHugeWindowBytes * kHugeWindowBytes;
  return std::clamp(rounded, kMinDefaultBytes, kMaxDefaultBytes);
}

std::size_t LlcDefeatingBufferBytes(std::size_t llc_bytes, std::size_t stride) {
  // Each element touches one 64 B line, so the cold footprint is bytes * 64 / stride.
  const std::size_t lines_per_element = std::max(stride, kMinStride) / 64;
  const std::size_t wanted =
      (llc_bytes * 4 * lines_per_element + kHugeWindowBytes - 1) / kHugeWindowBytes * kHugeWindowBytes;
  return std::clamp(wanted, kMinDefaultBytes, kMaxDefaultBytes);
}

void LatencyBuffer::Flush() const { FlushLines(arena_.data(), layout_.elements(), layout_.stride); }

Expected<LatencyBuffer> LatencyBuffer::Create(const LatencyBufferSpec& spec) {
  if (!std::has_single_bit(spec.stride) || spec.stride < kMinStride || spec.stride > kMaxStride) {
    return Failure{Outcome::kInvalidSpec,
                   "stride " + std::to_string(spec.stride) + ": must be a power of two in [64, 4096]"};
  }
  ChaseLayout layout;
  layout.stride = spec.stride;
  const std::size_t requested =
      spec.bytes != 0 ? spec.bytes : DefaultLatencyBufferBytes(spec.loads_per_sample, spec.stride);
  layout.bytes = requested / spec.stride * spec.stride;
  if (layout.elements() < 2 || layout.elements() > std::numeric_limits<std::uint32_t>::max()) {
    return Failure{Outcome::kInvalidSpec, "buffer of " + std::to_string(requested) +
                                              " bytes: need 2 to 2^32 elements of " + std::to_string(spec.stride) +
                                              " bytes"};
  }

  auto arena = Arena::Create({.bytes = layout.bytes, .node = spec.mem_node, .pages = spec.pages});
  if (!arena) return arena.failure();
  // One window per TLB reach: 64 base pages, or one huge page, at most 2 MiB.
  const std::size_t window = TlbLocalWindow(arena->info().page_kind, arena->info().page_bytes);
  layout.window_bytes = std::min(window, layout.bytes);

  LinkChase(arena->data(), layout, ChaseOrder(layout, spec.seed));
  void* start = arena->data();  // element 0: every element is on the single cycle
  // Without a flush instruction (non-x86 builds) a small buffer would be
  // measured from the cache: refuse it rather than publish cache latency.
  const bool flushed = !spec.allow_cache_hits && layout.elements() * 64 < 4 * spec.llc_bytes;
  if (flushed && !CanFlush()) {
    return Failure{Outcome::kInvalidSpec,
                   "a " + std::to_string(layout.bytes >> 20) +
                       " MiB latency buffer fits the LLC and this CPU cannot flush lines: use "
                       "a buffer of at least " +
                       std::to_string(LlcDefeatingBufferBytes(spec.llc_bytes, spec.stride) >> 20) + " MiB"};
  }
  return LatencyBuffer(std::move(arena).value(), layout, start, flushed);
}

LatencyResult MeasureLatency(LatencyBuffer& buffer, const LatencyRunSpec& spec) {
  LatencyResult result;
  result.cpu = spec.cpu;
  result.loads_per_sample = spec.loads_per_sample;
  result.stride = buffer.layout().stride;
  result.window_bytes = buffer.layout().window_bytes;
  result.flushed = buffer.flushed();
  result.buffer = buffer.info();
  if (spec.samples <= 0 || spec.loads_per_sample == 0) {
    result.outcome = Outcome::kInvalidSpec;
    result.reason = "need samples > 0 and loads_per_sample > 0";
    return result;
  }
  // A fresh thread, so pinning never changes the caller's affinity.
  auto worker = StartThread("measuring", [&] { RunPinned(buffer, spec, result); });
  if (!worker.ok()) {
    result.outcome = worker.failure().outcome;
    result.reason = worker.failure().reason;
    return result;
  }
  worker.value().join();
  return result;
}

}  // namespace numaprobe::kernels
