// SPDX-License-Identifier: Apache-2.0
// AVX-512 (512-bit) inner loops; this file is compiled with -mavx512f and must
// only be called after __builtin_cpu_supports("avx512f") (see
// bandwidth_loops.h). Only used when explicitly requested: 512-bit
// instructions can lower the core's frequency licence for milliseconds on
// Intel parts, slowing whatever else runs on the core.
//
// Same shape as the AVX2 loops: 8 loads (512 B, eight lines) per iteration
// into 4 independent accumulators.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kBlock = 512;  // bytes per unrolled iteration

const __m512i* AsVec(const std::byte* p) { return reinterpret_cast<const __m512i*>(p); }
__m512i* AsVec(std::byte* p) { return reinterpret_cast<__m512i*>(p); }

std::uint64_t ReadAvx512(const std::byte* src, std::size_t bytes) {
  __m512i a0 = _mm512_setzero_si512();
  __m512i a1 = _mm512_setzero_si512();
  __m512i a2 = _mm512_setzero_si512();
  __m512i a3 = _mm512_setzero_si512();
  const std::byte* p = src;
  const std::byte* const block_end = src + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    const __m512i* v = AsVec(p);
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(v + 0));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(v + 1));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(v + 2));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(v + 3));
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(v + 4));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(v + 5));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(v + 6));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(v + 7));
  }
  for (const std::byte* const end = src + bytes; p != end; p += kLine) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(AsVec(p)));
  }
  const __m512i sum = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
  // Not _mm512_reduce_add_epi64: GCC 12's version trips -Wuninitialized
  // inside the intrinsic header (_mm256_undefined_si256).
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, sum);
  std::uint64_t total = 0;
  for (const std::uint64_t lane : lanes) total += lane;
  return total;
}

void WriteAvx512(std::byte* dst, std::size_t bytes, std::uint64_t pattern) {
  const __m512i v = _mm512_set1_epi64(static_cast<long long>(pattern));
  std::byte* p = dst;
  std::byte* const block_end = dst + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    __m512i* d = AsVec(p);
    _mm512_stream_si512(d + 0, v);
    _mm512_stream_si512(d + 1, v);
    _mm512_stream_si512(d + 2, v);
    _mm512_stream_si512(d + 3, v);
    _mm512_stream_si512(d + 4, v);
    _mm512_stream_si512(d + 5, v);
    _mm512_stream_si512(d + 6, v);
    _mm512_stream_si512(d + 7, v);
  }
  for (std::byte* const end = dst + bytes; p != end; p += kLine) {
    _mm512_stream_si512(AsVec(p), v);
  }
  _mm_sfence();
}

void CopyAvx512(std::byte* dst, const std::byte* src, std::size_t bytes) {
  std::size_t i = 0;
  const std::size_t block_end = bytes / kBlock * kBlock;
  for (; i != block_end; i += kBlock) {
    const __m512i* s = AsVec(src + i);
    __m512i* d = AsVec(dst + i);
    const __m512i x0 = _mm512_load_si512(s + 0);
    const __m512i x1 = _mm512_load_si512(s + 1);
    const __m512i x2 = _mm512_load_si512(s + 2);
    const __m512i x3 = _mm512_load_si512(s + 3);
    const __m512i x4 = _mm512_load_si512(s + 4);
    const __m512i x5 = _mm512_load_si512(s + 5);
    const __m512i x6 = _mm512_load_si512(s + 6);
    const __m512i x7 = _mm512_load_si512(s + 7);
    _mm512_store_si512(d + 0, x0);
    _mm512_store_si512(d + 1, x1);
    _mm512_store_si512(d + 2, x2);
    _mm512_store_si512(d + 3, x3);
    _mm512_store_si512(d + 4, x4);
    _mm512_store_si512(d + 5, x5);
    _mm512_store_si512(d + 6, x6);
    _mm512_store_si512(d + 7, x7);
  }
  for (; i != bytes; i += kLine) {
    _mm512_store_si512(AsVec(dst + i), _mm512_load_si512(AsVec(src + i)));
  }
}

}  // namespace

const BandwidthLoops kAvx512Loops = {&ReadAvx512, &WriteAvx512, &CopyAvx512};

}  // namespace numaprobe::kernels
