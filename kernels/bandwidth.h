// SPDX-License-Identifier: Apache-2.0
// Memory bandwidth from one (or N) pinned threads: read (vector loads into
// independent accumulators), write (non-temporal stores), copy (loads + stores).
//
// Short bursts: each burst starts where the previous one ended (a rotating
// cursor over a buffer much larger than the LLC), so no burst re-reads what its
// predecessor left in cache - restarting at offset 0 inflates 1 ms bursts by up
// to 60% (docs/measurement.md). Byte accounting follows STREAM and likwid-bench:
// read counts bytes loaded, write bytes stored, copy bytes loaded + bytes stored;
// write-allocate traffic is not counted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "kernels/arena.h"
#include "kernels/result.h"

namespace numaprobe::kernels {

enum class BandwidthOp { kRead, kWrite, kCopy };
inline constexpr BandwidthOp kAllBandwidthOps[] = {BandwidthOp::kRead, BandwidthOp::kWrite, BandwidthOp::kCopy};
std::string_view BandwidthOpName(BandwidthOp op);  // "read", "write", "copy": also what config and flags accept

// The smallest buffer on which `threads` threads' bursts of `burst_bytes`
// rotate: four burst footprints, so no burst starts on lines its predecessor
// left in the LLC. MeasureBandwidth refuses less; the config checks it up front
// with the same rule.
std::size_t MinBandwidthBufferBytes(std::size_t burst_bytes, std::size_t threads);

// Bytes one thread loads (and, for copy, stores) per burst of `burst_bytes`:
// copy splits the burst between its two sides (a multiple of 64 each), so a
// burst of every op moves `burst_bytes` as its figure counts them.
std::size_t BytesPerSide(BandwidthOp op, std::size_t burst_bytes);

// Instruction set of the inner loops. kAuto picks the widest that is cheap to
// run beside a workload: AVX2 (else SSE2) on x86-64, NEON on arm64. AVX-512 is
// never picked automatically: 512-bit instructions can lower the core's
// frequency licence and slow the workloads sharing the host. SVE neither: one
// core's memory bandwidth does not depend on the vector width, and NEON runs
// on every arm64 CPU, so figures stay comparable across a fleet.
enum class Isa { kAuto, kSse2, kAvx2, kAvx512, kNeon, kSve };
// The ISAs this build's architecture has (kAuto first): what --isa accepts.
#if defined(__aarch64__)
inline constexpr Isa kAllIsas[] = {Isa::kAuto, Isa::kNeon, Isa::kSve};
#else
inline constexpr Isa kAllIsas[] = {Isa::kAuto, Isa::kSse2, Isa::kAvx2, Isa::kAvx512};
#endif
std::string_view IsaName(Isa isa);
// The ISA the loops will run, decided by the CPU at run time (isa_x86.cc,
// isa_arm64.cc): kAuto as above; an unsupported request falls back the same
// way (AVX-512 -> AVX2 -> SSE2, SVE -> NEON); results report the ISA used.
Isa ResolveIsa(Isa requested);

struct BandwidthBufferSpec {
  int mem_node = -1;
  std::size_t bytes = 512u << 20;
  PagePolicy pages = PagePolicy::kAuto;
  // Non-empty: spread over these nodes (node -> weight) instead of on
  // mem_node (ArenaSpec::weighted_interleave).
  std::map<int, int> weighted_interleave = {};
};

class BandwidthBuffer {
 public:
  static Expected<BandwidthBuffer> Create(const BandwidthBufferSpec& spec);
  const BufferInfo& info() const { return arena_.info(); }
  Arena& arena() { return arena_; }
  std::size_t& cursor() { return cursor_; }

 private:
  explicit BandwidthBuffer(Arena arena) : arena_(std::move(arena)) {}
  Arena arena_;
  std::size_t cursor_ = 0;
};

struct BandwidthRunSpec {
  std::vector<int> cpus;  // one pinned thread per CPU; one CPU by default
  BandwidthOp op = BandwidthOp::kRead;
  // Bytes each thread moves per burst, counted as the figure counts them
  // (copy: half loaded, half stored; BytesPerSide), so every op's burst lasts
  // about as long: ~1-2 ms here. A burst saturates the memory a workload
  // beside it uses; copy used to move 32 MiB per side, a stall twice as long
  // for the same figure (docs/performance.md, "Harm to the workload beside
  // the probes"). With rotation, 32 MiB agrees with 64 MiB bursts within noise.
  std::size_t burst_bytes = 32u << 20;
  int bursts = 5;        // accepted bursts wanted
  int max_attempts = 0;  // 0: 3 * bursts
  std::size_t warmup_bytes = 32u << 20;
  Isa isa = Isa::kAuto;
  std::size_t reverify_pages = 64;
  // A thread that has not reached the per-burst barrier after this long (it
  // was descheduled) gets the burst discarded; after 10x the run gives up with
  // kTimeout instead of spinning on.
  std::chrono::milliseconds barrier_timeout{1000};
  // The clock's step; 0: measured at the start of the run (timer_resolution.h).
  // Tests set it to stand for a coarse clock.
  std::int64_t clock_step_ns = 0;
  const std::atomic<bool>* stop = nullptr;  // checked between bursts
};

struct BandwidthResult {
  Outcome outcome = Outcome::kOk;
  std::string reason;
  BandwidthOp op = BandwidthOp::kRead;
  std::vector<int> cpus;
  Isa isa = Isa::kSse2;
  SampleStats bytes_per_second;
  std::uint64_t bytes_per_burst = 0;  // exact bytes counted per burst, all threads
  std::uint64_t bytes_total = 0;      // over accepted bursts
  BufferInfo buffer;
  Discards discards;
  ClockReport clock;
  double cpu_seconds = 0;  // all threads' CPU time, warm-up and barriers included
  // Buffer offset at which each timed burst (accepted or discarded) started:
  // consecutive bursts rotate through the buffer.
  std::vector<std::size_t> burst_offsets;
};

BandwidthResult MeasureBandwidth(BandwidthBuffer& buffer, const BandwidthRunSpec& spec);

}  // namespace numaprobe::kernels
