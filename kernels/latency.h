// SPDX-License-Identifier: Apache-2.0
// Idle memory latency: a dependent-load pointer chase over a buffer on a chosen
// node, run from a thread pinned to a chosen CPU.
//
// A LatencyBuffer is prepared (allocate, bind, pre-fault, verify, link the
// chain) and measured many times; the chain is continued between samples.
// Every load must miss the caches. Two ways to make sure, chosen per buffer:
//  - flushed (the default): a small buffer (DefaultLatencyBufferBytes, 16 MiB
//    for the default sample) whose element lines are flushed with clflushopt
//    before each sample (about 0.3 ms per 100k lines, not timed). Its memory is
//    a fraction of an LLC-sized one, so the daemon can allocate it per probe;
//  - by size: a buffer whose footprint (bytes * 64 / stride) is at least 4x
//    the measuring CPU's LLC (LlcDefeatingBufferBytes), so a lap evicts what
//    the last one touched. Any buffer at least that large is not flushed.
// docs/performance.md compares the two side by side.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/arena.h"
#include "kernels/chase.h"
#include "kernels/result.h"

namespace numaprobe::kernels {

struct LatencyBufferSpec {
  int mem_node = -1;
  std::size_t bytes = 0;  // 0: DefaultLatencyBufferBytes(loads_per_sample, stride)
  std::uint64_t loads_per_sample = 40'000;
  std::size_t llc_bytes = 32u << 20;  // below 4x this footprint the buffer is flushed per sample
  bool allow_cache_hits = false;      // never flush: for measuring cache latency on purpose
  std::size_t stride = 128;
  PagePolicy pages = PagePolicy::kAuto;
  std::uint64_t seed = 0x6e756d6170726f62;  // fixed: the same pattern every run
};

// The flushed buffer: room for two samples' loads without a lap (a lap
// inside a sample would hit the cache), rounded up to 2 MiB, at least 16 MiB.
std::size_t DefaultLatencyBufferBytes(std::uint64_t loads_per_sample, std::size_t stride);

// The buffer that defeats the LLC by size: bytes * 64 / stride >= 4 *
// llc_bytes, rounded up to 2 MiB, clamped to [16 MiB, 2 GiB].
std::size_t LlcDefeatingBufferBytes(std::size_t llc_bytes, std::size_t stride);

class LatencyBuffer {
 public:
  static Expected<LatencyBuffer> Create(const LatencyBufferSpec& spec);

  const BufferInfo& info() const { return arena_.info(); }
  const ChaseLayout& layout() const { return layout_; }
  Arena& arena() { return arena_; }
  void*& cursor() { return cursor_; }  // where the chain continues next sample
  // True when the footprint is under 4 LLCs: Flush() before every sample.
  bool flushed() const { return flushed_; }
  // Writes back and invalidates every element's line in every cache of the
  // machine (clflushopt where the CPU has it, else clflush), then fences, so
  // the next loads of the chain come from memory.
  void Flush() const;

 private:
  LatencyBuffer(Arena arena, ChaseLayout layout, void* cursor, bool flushed)
      : arena_(std::move(arena)), layout_(layout), cursor_(cursor), flushed_(flushed) {}
  Arena arena_;
  ChaseLayout layout_;
  void* cursor_;
  bool flushed_;
};

struct LatencyRunSpec {
  int cpu = -1;
  int samples = 7;                          // accepted samples wanted
  std::uint64_t loads_per_sample = 40'000;  // ~5 ms at 130 ns
  std::uint64_t warmup_loads = 20'000;      // leaves low P-states, refills the TLB
  // What a run may spend on disturbed samples (kernels/adaptive_sampling.h):
  // it gives up with kDisturbed only once it has chased max_attempts *
  // loads_per_sample loads (the CPU cap; 0: 3 * samples) or spent max_wall_ns.
  int max_attempts = 0;
  std::int64_t max_wall_ns = 2'000'000'000;
  std::size_t reverify_pages = 64;  // random pages re-checked before measuring
  // The clock's step; 0: measured at the start of the run (timer_resolution.h).
  // Tests set it to stand for a coarse clock.
  std::int64_t clock_step_ns = 0;
  const std::atomic<bool>* stop = nullptr;  // checked between samples
};

struct LatencyResult {
  Outcome outcome = Outcome::kOk;
  std::string reason;
  int cpu = -1;
  SampleStats seconds_per_load;  // median / min / max / MAD over accepted samples
  std::uint64_t loads_per_sample = 0;
  std::uint64_t shortest_sample_loads = 0;  // < loads_per_sample after preemptions
  std::uint64_t longest_sample_loads = 0;   // > loads_per_sample when the clock needed longer samples
  int attempts = 0;                         // samples chased, accepted or not
  bool flushed = false;                     // the buffer was flushed before each sample
  std::size_t stride = 0;
  std::size_t window_bytes = 0;
  BufferInfo buffer;
  Discards discards;
  ClockReport clock;
  double cpu_seconds = 0;  // thread CPU time the run cost (warm-up included)
};

// Runs the chase on a thread pinned to spec.cpu. Never reports a figure unless
// the buffer's placement was verified on its node.
LatencyResult MeasureLatency(LatencyBuffer& buffer, const LatencyRunSpec& spec);

}  // namespace numaprobe::kernels
