// SPDX-License-Identifier: Apache-2.0
// SSE2 (128-bit) inner loops: the x86-64 baseline, used when the CPU has no
// AVX2. Same shape as the AVX2 loops: 8 loads (128 B, two lines) per iteration
// into 4 independent accumulators.
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kBlock = 128;  // bytes per unrolled iteration

const __m128i* AsVec(const std::byte* p) { return reinterpret_cast<const __m128i*>(p); }
__m128i* AsVec(std::byte* p) { return reinterpret_cast<__m128i*>(p); }

std::uint64_t ReadSse2(const std::byte* src, std::size_t bytes) {
  __m128i a0 = _mm_setzero_si128();
  __m128i a1 = _mm_setzero_si128();
  __m128i a2 = _mm_setzero_si128();
  __m128i a3 = _mm_setzero_si128();
  const std::byte* p = src;
  const std::byte* const block_end = src + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    const __m128i* v = AsVec(p);
    a0 = _mm_add_epi64(a0, _mm_load_si128(v + 0));
    a1 = _mm_add_epi64(a1, _mm_load_si128(v + 1));
    a2 = _mm_add_epi64(a2, _mm_load_si128(v + 2));
    a3 = _mm_add_epi64(a3, _mm_load_si128(v + 3));
    a0 = _mm_add_epi64(a0, _mm_load_si128(v + 4));
    a1 = _mm_add_epi64(a1, _mm_load_si128(v + 5));
    a2 = _mm_add_epi64(a2, _mm_load_si128(v + 6));
    a3 = _mm_add_epi64(a3, _mm_load_si128(v + 7));
  }
  for (const std::byte* const end = src + bytes; p != end; p += kLine) {
    const __m128i* v = AsVec(p);
    a0 = _mm_add_epi64(a0, _mm_load_si128(v + 0));
    a1 = _mm_add_epi64(a1, _mm_load_si128(v + 1));
    a2 = _mm_add_epi64(a2, _mm_load_si128(v + 2));
    a3 = _mm_add_epi64(a3, _mm_load_si128(v + 3));
  }
  const __m128i sum = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(sum)) +
         static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum)));
}

void WriteSse2(std::byte* dst, std::size_t bytes, std::uint64_t pattern) {
  const __m128i v = _mm_set1_epi64x(static_cast<long long>(pattern));
  std::byte* p = dst;
  std::byte* const block_end = dst + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    __m128i* d = AsVec(p);
    _mm_stream_si128(d + 0, v);
    _mm_stream_si128(d + 1, v);
    _mm_stream_si128(d + 2, v);
    _mm_stream_si128(d + 3, v);
    _mm_stream_si128(d + 4, v);
    _mm_stream_si128(d + 5, v);
    _mm_stream_si128(d + 6, v);
    _mm_stream_si128(d + 7, v);
  }
  for (std::byte* const end = dst + bytes; p != end; p += kLine) {
    __m128i* d = AsVec(p);
    _mm_stream_si128(d + 0, v);
    _mm_stream_si128(d + 1, v);
    _mm_stream_si128(d + 2, v);
    _mm_stream_si128(d + 3, v);
  }
  _mm_sfence();
}

void CopySse2(std::byte* dst, const std::byte* src, std::size_t bytes) {
  // One line (4 vectors) per step: the loads of a step are independent, and
  // the out-of-order core overlaps consecutive steps.
  for (std::size_t i = 0; i != bytes; i += kLine) {
    const __m128i* s = AsVec(src + i);
    __m128i* d = AsVec(dst + i);
    const __m128i x0 = _mm_load_si128(s + 0);
    const __m128i x1 = _mm_load_si128(s + 1);
    const __m128i x2 = _mm_load_si128(s + 2);
    const __m128i x3 = _mm_load_si128(s + 3);
    _mm_store_si128(d + 0, x0);
    _mm_store_si128(d + 1, x1);
    _mm_store_si128(d + 2, x2);
    _mm_store_si128(d + 3, x3);
  }
}

}  // namespace

const BandwidthLoops kSse2Loops = {&ReadSse2, &WriteSse2, &CopySse2};

}  // namespace numaprobe::kernels
