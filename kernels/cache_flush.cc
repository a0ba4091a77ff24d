#include "kernels/cache_flush.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace numaprobe::kernels {

#if defined(__x86_64__)

bool HasClflushopt() {
  // CPUID.(EAX=7,ECX=0):EBX bit 23.
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & (1u << 23)) != 0;
  }();
  return has;
}

bool CanFlush() { return true; }

namespace {

// clflushopt is only weakly ordered with other flushes, so a loop of them
// pipelines (about 3 ns per line here); clflush serialises each one.
__attribute__((target("clflushopt"))) void FlushOpt(const char* p, std::size_t count, std::size_t stride) {
  for (std::size_t i = 0; i < count; ++i) _mm_clflushopt(const_cast<char*>(p + i * stride));
}

void FlushLegacy(const char* p, std::size_t count, std::size_t stride) {
  for (std::size_t i = 0; i < count; ++i) _mm_clflush(p + i * stride);
}

}  // namespace

void FlushLines(const void* base, std::size_t count, std::size_t stride) {
  const char* p = static_cast<const char*>(base);
  if (HasClflushopt()) {
    FlushOpt(p, count, stride);
  } else {
    FlushLegacy(p, count, stride);
  }
  _mm_mfence();  // the chase's loads must not start before the flushes complete
}

#else

bool HasClflushopt() { return false; }
bool CanFlush() { return false; }
void FlushLines(const void*, std::size_t, std::size_t) {}

#endif

}  // namespace numaprobe::kernels
