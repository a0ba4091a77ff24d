// SPDX-License-Identifier: Apache-2.0
// arm64 (kernels/CMakeLists.txt builds this file for aarch64 only): DC CIVAC,
// "clean and invalidate by virtual address to the point of coherency", writes
// a line back if dirty and invalidates it in every cache up to memory, like
// x86's clflush. Linux lets user space issue it (it sets SCTLR_EL1.UCI; the
// kernel's own cache maintenance for JITs relies on the same), so no
// privilege is needed.
#include "kernels/cache_flush.h"

namespace numaprobe::kernels {

bool CanFlush() { return true; }

void FlushLines(const void* base, std::size_t count, std::size_t stride) {
  const char* p = static_cast<const char*>(base);
  // Successive DC CIVACs are not ordered with each other, so they pipeline
  // as clflushopt does; the DSB waits for all of them, and no later load can
  // start before it completes.
  for (std::size_t i = 0; i < count; ++i) asm volatile("dc civac, %0" : : "r"(p + i * stride) : "memory");
  asm volatile("dsb ish" ::: "memory");
}

}  // namespace numaprobe::kernels
