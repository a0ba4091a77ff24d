// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/bandwidth*.cc, kernels/loaded_latency*.cc and their
// tests: the per-ISA inner loops.
//
// Each ISA lives in its own translation unit compiled with that ISA's flags
// (-mavx2, -mavx512f, +sve), so nothing here may be inline: an inline function
// instantiated in an AVX-512 file could be picked by the linker for a caller
// on a CPU without AVX-512. LoopsFor (isa_x86.cc, isa_arm64.cc) hands them
// out only for an ISA ResolveIsa found on this CPU.
//
// Contract shared by all loops: pointers are 64-byte aligned, `bytes` is a
// multiple of 64 (one cache line). No software prefetch: the hardware
// prefetchers are part of what single-core bandwidth measures.
#pragma once

#include <cstddef>
#include <cstdint>

namespace numaprobe::kernels {

// Loads every byte of [src, src + bytes) into independent accumulators and
// returns the 64-bit lane sum, so the loads cannot be optimised away and a
// change of any byte changes the result.
using ReadLoop = std::uint64_t (*)(const std::byte* src, std::size_t bytes);
// Fills [dst, dst + bytes) with `pattern` (every 8-byte word) using
// non-temporal stores, then a barrier that waits for them (x86 sfence, arm64
// dsb), so their cost is counted before the caller reads the clock.
using WriteLoop = void (*)(std::byte* dst, std::size_t bytes, std::uint64_t pattern);
// Copies [src, src + bytes) to dst with regular loads and stores (likwid-bench
// copy_avx, STREAM copy): stores allocate in cache (write-allocate traffic).
using CopyLoop = void (*)(std::byte* dst, const std::byte* src, std::size_t bytes);

// One cache line: the unit every loop moves and every burst is a multiple of.
constexpr std::size_t kLine = 64;
// What the write loops store: a recognisable word ("numaprob"), so a test can
// see which bytes a write reached.
constexpr std::uint64_t kWritePattern = 0x6e756d6170726f62;

struct BandwidthLoops {
  ReadLoop read;
  WriteLoop write;
  CopyLoop copy;
};

#if defined(__aarch64__)
// Defined in bandwidth_neon.cc and bandwidth_sve.cc.
extern const BandwidthLoops kNeonLoops;
extern const BandwidthLoops kSveLoops;
#else
// Defined in bandwidth_sse2.cc, bandwidth_avx2.cc and bandwidth_avx512.cc.
extern const BandwidthLoops kSse2Loops;
extern const BandwidthLoops kAvx2Loops;
extern const BandwidthLoops kAvx512Loops;
#endif

}  // namespace numaprobe::kernels
