// SPDX-License-Identifier: Apache-2.0
// Evicting lines from every cache, unprivileged: clflushopt (or clflush on
// CPUs without it) on x86-64, DC CIVAC on arm64, writes a line back if dirty
// and invalidates it in all caches of the coherence domain, so the next load
// of it comes from memory. One implementation per architecture
// (cache_flush_x86.cc, cache_flush_arm64.cc).
#pragma once

#include <cstddef>

namespace numaprobe::kernels {

// Flushes the first line of each of `count` elements `stride` bytes apart
// from `base`, then fences so no later load can pass the flushes.
void FlushLines(const void* base, std::size_t count, std::size_t stride);

// Whether FlushLines flushes on this build (false: callers must size buffers
// past the LLC instead; every architecture built today can flush).
bool CanFlush();

}  // namespace numaprobe::kernels
