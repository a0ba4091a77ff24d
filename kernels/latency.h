// Idle memory latency: a dependent-load pointer chase over a buffer on a chosen
// node, run from a thread pinned to a chosen CPU.
//
// A LatencyBuffer is prepared once (allocate, bind, pre-fault, verify, link the
// chain) and measured many times: preparation is the expensive part and is not
// repeated by the daemon. The chain is continued between samples, so each
// sample touches lines last touched a whole lap ago - evicted from the LLC as
// long as the buffer's footprint (bytes * 64 / stride) is >= 4x the LLC the
// measuring CPU can fill. DefaultLatencyBufferBytes() sizes it that way from
// the CPU's LLC (hwloc), instead of flushing lines before each sample.
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
  std::size_t bytes = 0;  // 0: DefaultLatencyBufferBytes(llc_bytes, stride)
  std::size_t llc_bytes = 32u << 20;
  std::size_t stride = 128;
  PagePolicy pages = PagePolicy::kAuto;
  std::uint64_t seed = 0x6e756d6170726f62;  // fixed: the same pattern every run
};

// bytes such that bytes * 64 / stride >= 4 * llc_bytes, rounded up to 2 MiB,
// clamped to [16 MiB, 2 GiB].
// `max_bytes` (rounded down to 2 MiB) lowers the 2 GiB ceiling, never the
// 16 MiB floor: what a memory budget leaves for the buffer.
std::size_t DefaultLatencyBufferBytes(std::size_t llc_bytes, std::size_t stride,
                                      std::size_t max_bytes = SIZE_MAX);

class LatencyBuffer {
 public:
  static Expected<LatencyBuffer> Create(const LatencyBufferSpec& spec);

  const BufferInfo& info() const { return arena_.info(); }
  const ChaseLayout& layout() const { return layout_; }
  Arena& arena() { return arena_; }
  void*& cursor() { return cursor_; }  // where the chain continues next sample

 private:
  LatencyBuffer(Arena arena, ChaseLayout layout, void* cursor)
      : arena_(std::move(arena)), layout_(layout), cursor_(cursor) {}
  Arena arena_;
  ChaseLayout layout_;
  void* cursor_;
};

struct LatencyRunSpec {
  int cpu = -1;
  int samples = 7;                          // accepted samples wanted
  std::uint64_t loads_per_sample = 40'000;  // ~5 ms at 130 ns
  std::uint64_t warmup_loads = 20'000;      // leaves low P-states, refills the TLB
  int max_attempts = 0;                     // 0: 3 * samples; then kDisturbed
  std::size_t reverify_pages = 64;          // random pages re-checked before measuring
  const std::atomic<bool>* stop = nullptr;  // checked between samples
};

struct LatencyResult {
  Outcome outcome = Outcome::kOk;
  std::string reason;
  int cpu = -1;
  SampleStats seconds_per_load;  // median / min / max / MAD over accepted samples
  std::uint64_t loads_per_sample = 0;
  std::size_t stride = 0;
  std::size_t window_bytes = 0;
  BufferInfo buffer;
  Discards discards;
  double cpu_seconds = 0;  // thread CPU time the run cost (warm-up included)
};

// Runs the chase on a thread pinned to spec.cpu. Never reports a figure unless
// the buffer's placement was verified on its node.
LatencyResult MeasureLatency(LatencyBuffer& buffer, const LatencyRunSpec& spec);

}  // namespace numaprobe::kernels
