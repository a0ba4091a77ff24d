// SPDX-License-Identifier: Apache-2.0
// AVX2 (256-bit) inner loops; this file is compiled with -mavx2 and must only
// be called after __builtin_cpu_supports("avx2") (see bandwidth_loops.h).
//
// Read: 8 loads (256 B) per iteration into 4 independent accumulators, so the
// adds never serialise the loads - the loop is bound by how many lines the
// core and its prefetchers keep in flight, which is what we want to measure
// (likwid-bench load_avx uses 4 loads per iteration; 8 halves loop overhead).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kBlock = 256;  // bytes per unrolled iteration

const __m256i* AsVec(const std::byte* p) { return reinterpret_cast<const __m256i*>(p); }
__m256i* AsVec(std::byte* p) { return reinterpret_cast<__m256i*>(p); }

std::uint64_t ReadAvx2(const std::byte* src, std::size_t bytes) {
  __m256i a0 = _mm256_setzero_si256();
  __m256i a1 = _mm256_setzero_si256();
  __m256i a2 = _mm256_setzero_si256();
  __m256i a3 = _mm256_setzero_si256();
  const std::byte* p = src;
  const std::byte* const block_end = src + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    const __m256i* v = AsVec(p);
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(v + 0));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(v + 1));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(v + 2));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(v + 3));
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(v + 4));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(v + 5));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(v + 6));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(v + 7));
  }
  for (const std::byte* const end = src + bytes; p != end; p += kLine) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(AsVec(p)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(AsVec(p) + 1));
  }
  const __m256i sum = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  const __m128i half = _mm_add_epi64(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(half)) + static_cast<std::uint64_t>(_mm_extract_epi64(half, 1));
}

void WriteAvx2(std::byte* dst, std::size_t bytes, std::uint64_t pattern) {
  const __m256i v = _mm256_set1_epi64x(static_cast<long long>(pattern));
  std::byte* p = dst;
  std::byte* const block_end = dst + bytes / kBlock * kBlock;
  for (; p != block_end; p += kBlock) {
    __m256i* d = AsVec(p);
    _mm256_stream_si256(d + 0, v);
    _mm256_stream_si256(d + 1, v);
    _mm256_stream_si256(d + 2, v);
    _mm256_stream_si256(d + 3, v);
    _mm256_stream_si256(d + 4, v);
    _mm256_stream_si256(d + 5, v);
    _mm256_stream_si256(d + 6, v);
    _mm256_stream_si256(d + 7, v);
  }
  for (std::byte* const end = dst + bytes; p != end; p += kLine) {
    _mm256_stream_si256(AsVec(p), v);
    _mm256_stream_si256(AsVec(p) + 1, v);
  }
  _mm_sfence();
}

void CopyAvx2(std::byte* dst, const std::byte* src, std::size_t bytes) {
  std::size_t i = 0;
  const std::size_t block_end = bytes / kBlock * kBlock;
  for (; i != block_end; i += kBlock) {
    const __m256i* s = AsVec(src + i);
    __m256i* d = AsVec(dst + i);
    const __m256i x0 = _mm256_load_si256(s + 0);
    const __m256i x1 = _mm256_load_si256(s + 1);
    const __m256i x2 = _mm256_load_si256(s + 2);
    const __m256i x3 = _mm256_load_si256(s + 3);
    const __m256i x4 = _mm256_load_si256(s + 4);
    const __m256i x5 = _mm256_load_si256(s + 5);
    const __m256i x6 = _mm256_load_si256(s + 6);
    const __m256i x7 = _mm256_load_si256(s + 7);
    _mm256_store_si256(d + 0, x0);
    _mm256_store_si256(d + 1, x1);
    _mm256_store_si256(d + 2, x2);
    _mm256_store_si256(d + 3, x3);
    _mm256_store_si256(d + 4, x4);
    _mm256_store_si256(d + 5, x5);
    _mm256_store_si256(d + 6, x6);
    _mm256_store_si256(d + 7, x7);
  }
  for (; i != bytes; i += kLine) {
    const __m256i x0 = _mm256_load_si256(AsVec(src + i));
    const __m256i x1 = _mm256_load_si256(AsVec(src + i) + 1);
    _mm256_store_si256(AsVec(dst + i), x0);
    _mm256_store_si256(AsVec(dst + i) + 1, x1);
  }
}

}  // namespace

const BandwidthLoops kAvx2Loops = {&ReadAvx2, &WriteAvx2, &CopyAvx2};

}  // namespace numaprobe::kernels
