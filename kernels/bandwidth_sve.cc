// SPDX-License-Identifier: Apache-2.0
// SVE inner loops (compiled with +sve; only called when the kernel reports
// HWCAP_SVE, see isa_arm64.cc). Vector-length agnostic: a vector is 128 to
// 2048 bits (16 B on Grace and Graviton 4, 32 B on Graviton 3, 64 B on
// A64FX), so the loops step by whole vectors and the predicate of
// svwhilelt masks the tail of a slice. Four vectors per step into four
// independent accumulators, as the other loops. The write uses STNT1D, SVE's
// non-temporal store.
#include <arm_sve.h>

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {
namespace {

const std::uint64_t* Words(const std::byte* p) { return reinterpret_cast<const std::uint64_t*>(p); }
std::uint64_t* Words(std::byte* p) { return reinterpret_cast<std::uint64_t*>(p); }

std::uint64_t ReadSve(const std::byte* src, std::size_t bytes) {
  const std::uint64_t* w = Words(src);
  const std::uint64_t n = bytes / 8;
  const std::uint64_t vl = svcntd();  // 64-bit lanes per vector
  svuint64_t a0 = svdup_u64(0);
  svuint64_t a1 = svdup_u64(0);
  svuint64_t a2 = svdup_u64(0);
  svuint64_t a3 = svdup_u64(0);
  for (std::uint64_t i = 0; i < n; i += 4 * vl) {
    const svbool_t p0 = svwhilelt_b64(i, n);
    const svbool_t p1 = svwhilelt_b64(i + vl, n);
    const svbool_t p2 = svwhilelt_b64(i + 2 * vl, n);
    const svbool_t p3 = svwhilelt_b64(i + 3 * vl, n);
    a0 = svadd_u64_m(p0, a0, svld1_u64(p0, w + i));
    a1 = svadd_u64_m(p1, a1, svld1_u64(p1, w + i + vl));
    a2 = svadd_u64_m(p2, a2, svld1_u64(p2, w + i + 2 * vl));
    a3 = svadd_u64_m(p3, a3, svld1_u64(p3, w + i + 3 * vl));
  }
  const svbool_t all = svptrue_b64();
  return svaddv_u64(all, svadd_u64_x(all, svadd_u64_x(all, a0, a1), svadd_u64_x(all, a2, a3)));
}

void WriteSve(std::byte* dst, std::size_t bytes, std::uint64_t pattern) {
  std::uint64_t* w = Words(dst);
  const std::uint64_t n = bytes / 8;
  const std::uint64_t vl = svcntd();
  const svuint64_t v = svdup_u64(pattern);
  for (std::uint64_t i = 0; i < n; i += 2 * vl) {
    svstnt1_u64(svwhilelt_b64(i, n), w + i, v);
    svstnt1_u64(svwhilelt_b64(i + vl, n), w + i + vl, v);
  }
  asm volatile("dsb ishst" ::: "memory");  // as in WriteNeon
}

void CopySve(std::byte* dst, const std::byte* src, std::size_t bytes) {
  const std::uint64_t* s = Words(src);
  std::uint64_t* d = Words(dst);
  const std::uint64_t n = bytes / 8;
  const std::uint64_t vl = svcntd();
  for (std::uint64_t i = 0; i < n; i += 2 * vl) {
    const svbool_t p0 = svwhilelt_b64(i, n);
    const svbool_t p1 = svwhilelt_b64(i + vl, n);
    const svuint64_t x0 = svld1_u64(p0, s + i);
    const svuint64_t x1 = svld1_u64(p1, s + i + vl);
    svst1_u64(p0, d + i, x0);
    svst1_u64(p1, d + i + vl, x1);
  }
}

}  // namespace

const BandwidthLoops kSveLoops = {&ReadSve, &WriteSve, &CopySve};

}  // namespace numaprobe::kernels
