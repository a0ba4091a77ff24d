// SPDX-License-Identifier: Apache-2.0
// x86-64 (kernels/CMakeLists.txt builds this file for x86-64 only):
// clflushopt, or clflush on CPUs without it.
#include <cpuid.h>
#include <immintrin.h>

#include "kernels/cache_flush.h"

namespace numaprobe::kernels {
namespace {

bool HasClflushopt() {
  // CPUID.(EAX=7,ECX=0):EBX bit 23.
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & (1u << 23)) != 0;
  }();
  return has;
}

// clflushopt is only weakly ordered with other flushes, so a loop of them
// pipelines (about 3 ns per line here); clflush serialises each one.
__attribute__((target("clflushopt"))) void FlushOpt(const char* p, std::size_t count, std::size_t stride) {
  for (std::size_t i = 0; i < count; ++i) _mm_clflushopt(const_cast<char*>(p + i * stride));
}

void FlushLegacy(const char* p, std::size_t count, std::size_t stride) {
  for (std::size_t i = 0; i < count; ++i) _mm_clflush(p + i * stride);
}

}  // namespace

bool CanFlush() { return true; }

void FlushLines(const void* base, std::size_t count, std::size_t stride) {
  const char* p = static_cast<const char*>(base);
  if (HasClflushopt()) {
    FlushOpt(p, count, stride);
  } else {
    FlushLegacy(p, count, stride);
  }
  _mm_mfence();  // the chase's loads must not start before the flushes complete
}

}  // namespace numaprobe::kernels
