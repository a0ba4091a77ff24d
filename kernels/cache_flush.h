// Evicting lines from every cache, unprivileged: clflushopt (or clflush on
// CPUs without it) writes a line back if dirty and invalidates it in all
// caches of the coherence domain, so the next load of it comes from memory.
#pragma once

#include <cstddef>

namespace numaprobe::kernels {

// Flushes the first line of each of `count` elements `stride` bytes apart
// from `base`, then fences so no later load can pass the flushes.
void FlushLines(const void* base, std::size_t count, std::size_t stride);

// Whether FlushLines uses clflushopt (false: clflush, or no flush at all on a
// non-x86 build, where callers must size buffers past the LLC instead).
bool HasClflushopt();
bool CanFlush();

}  // namespace numaprobe::kernels
