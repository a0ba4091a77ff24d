// SPDX-License-Identifier: Apache-2.0
// NEON (Advanced SIMD, 128-bit) inner loops: the arm64 baseline and the
// automatic choice. Same shape as the x86 loops: 8 vector loads (128 B, two
// lines) per iteration into 4 independent accumulators; the compiler pairs
// adjacent loads and stores into LDP/STP of two q registers.
//
// The non-temporal write uses STNP, the pair store with a hint that the data
// will not be reused soon (Arm ARM: "Load/Store Non-temporal Pair"), the
// nearest arm64 has to x86's streaming stores: cores that honour it (Neoverse
// N1/V1/V2 do, for full lines) write the lines without reading them first.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kBlock = 128;  // bytes per unrolled iteration

const std::uint64_t* Words(const std::byte* p) { return reinterpret_cast<const std::uint64_t*>(p); }
std::uint64_t* Words(std::byte* p) { return reinterpret_cast<std::uint64_t*>(p); }

std::uint64_t ReadNeon(const std::byte* src, std::size_t bytes) {
  uint64x2_t a0 = vdupq_n_u64(0);
  uint64x2_t a1 = vdupq_n_u64(0);
  uint64x2_t a2 = vdupq_n_u64(0);
  uint64x2_t a3 = vdupq_n_u64(0);
  const std::byte* p = src;
  const std::byte* const block_end = src + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    const std::uint64_t* w = Words(p);
    a0 = vaddq_u64(a0, vld1q_u64(w + 0));
    a1 = vaddq_u64(a1, vld1q_u64(w + 2));
    a2 = vaddq_u64(a2, vld1q_u64(w + 4));
    a3 = vaddq_u64(a3, vld1q_u64(w + 6));
    a0 = vaddq_u64(a0, vld1q_u64(w + 8));
    a1 = vaddq_u64(a1, vld1q_u64(w + 10));
    a2 = vaddq_u64(a2, vld1q_u64(w + 12));
    a3 = vaddq_u64(a3, vld1q_u64(w + 14));
  }
  for (const std::byte* const end = src + bytes; p != end; p += kLine) {
    const std::uint64_t* w = Words(p);
    a0 = vaddq_u64(a0, vld1q_u64(w + 0));
    a1 = vaddq_u64(a1, vld1q_u64(w + 2));
    a2 = vaddq_u64(a2, vld1q_u64(w + 4));
    a3 = vaddq_u64(a3, vld1q_u64(w + 6));
  }
  return vaddvq_u64(vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3)));
}

// One line: two STNPs of two q registers each.
inline void StoreLineNonTemporal(std::byte* p, uint64x2_t v) {
  asm volatile(
      "stnp %q[v], %q[v], [%[p]]\n\t"
      "stnp %q[v], %q[v], [%[p], #32]"
      :
      : [p] "r"(p), [v] "w"(v)
      : "memory");
}

void WriteNeon(std::byte* dst, std::size_t bytes, std::uint64_t pattern) {
  const uint64x2_t v = vdupq_n_u64(pattern);
  std::byte* p = dst;
  std::byte* const block_end = dst + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    StoreLineNonTemporal(p, v);
    StoreLineNonTemporal(p + kLine, v);
  }
  for (std::byte* const end = dst + bytes; p != end; p += kLine) StoreLineNonTemporal(p, v);
  // Waits until the stores have completed, as sfence does on x86: the caller
  // reads the clock next.
  asm volatile("dsb ishst" ::: "memory");
}

void CopyNeon(std::byte* dst, const std::byte* src, std::size_t bytes) {
  // One line (4 vectors) per step: the loads of a step are independent, and
  // the out-of-order core overlaps consecutive steps.
  for (std::size_t i = 0; i != bytes; i += kLine) {
    const std::uint64_t* s = Words(src + i);
    std::uint64_t* d = Words(dst + i);
    const uint64x2_t x0 = vld1q_u64(s + 0);
    const uint64x2_t x1 = vld1q_u64(s + 2);
    const uint64x2_t x2 = vld1q_u64(s + 4);
    const uint64x2_t x3 = vld1q_u64(s + 6);
    vst1q_u64(d + 0, x0);
    vst1q_u64(d + 2, x1);
    vst1q_u64(d + 4, x2);
    vst1q_u64(d + 6, x3);
  }
}

}  // namespace

const BandwidthLoops kNeonLoops = {&ReadNeon, &WriteNeon, &CopyNeon};

}  // namespace numaprobe::kernels
