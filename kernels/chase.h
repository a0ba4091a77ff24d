// SPDX-License-Identifier: Apache-2.0
// The order of a dependent-load pointer chase that defeats hardware prefetchers
// without root or MSR writes (after google/multichase permutation.c):
//  - one element per `stride` bytes (128 or 256): the adjacent-line prefetcher
//    never supplies the next element, since its buddy line is never used;
//  - elements are visited in random order inside TLB-local windows (one huge
//    page or 64 base pages, at most 2 MiB: kernels/page_sizes.h), so every
//    access misses the cache but rarely the TLB;
//  - windows are visited in random order, so no stream prefetcher sees a stream.
// The chain is one single cycle over all elements: each line is visited exactly
// once per lap, and a lap touches (bytes / stride) distinct lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace numaprobe::kernels {

struct ChaseLayout {
  std::size_t bytes = 0;         // buffer size (multiple of stride)
  std::size_t stride = 128;      // distance between elements; a multiple of 64, power of two
  std::size_t window_bytes = 0;  // TLB-local window; multiple of stride
  std::size_t elements() const { return bytes / stride; }
};

// Visiting order: a permutation of [0, elements) built as described above.
std::vector<std::uint32_t> ChaseOrder(const ChaseLayout& layout, std::uint64_t seed);

// Writes the cyclic chain into `base`: the pointer stored at element order[i]
// points at element order[i + 1], the last one back at order[0].
void LinkChase(std::byte* base, const ChaseLayout& layout, const std::vector<std::uint32_t>& order);

// Follows the chain from element 0 and returns true when it returns to element 0
// after visiting every element exactly once.
bool IsSingleCycle(const std::byte* base, const ChaseLayout& layout);

// Follows `loads` dependent loads from `start` and returns where it stopped.
// The loop body is nothing but `p = *p`, unrolled, so each load waits for the
// previous one: the time per load is the load-to-use latency.
void* Chase(void* start, std::uint64_t loads);

}  // namespace numaprobe::kernels
