// SPDX-License-Identifier: Apache-2.0
#include "kernels/chase.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "kernels/prng.h"

namespace numaprobe::kernels {
namespace {

// Fisher-Yates, spelled out so the order depends only on the seed (see prng.h).
template <class It>
void Shuffle(It first, It last, SplitMix64& rng) {
  for (auto n = last - first; n > 1; --n) {
    const auto j = static_cast<decltype(n)>(rng.Below(static_cast<std::uint64_t>(n)));
    std::iter_swap(first + (n - 1), first + j);
  }
}

// Pointers are read with memcpy: the checker must not trust that what it
// reads is a valid pointer, so it treats it as an address value.
std::uintptr_t LoadLink(const std::byte* element) {
  std::uintptr_t link = 0;
  std::memcpy(&link, element, sizeof(link));
  return link;
}

}  // namespace

std::vector<std::uint32_t> ChaseOrder(const ChaseLayout& layout, std::uint64_t seed) {
  const std::size_t elements = layout.elements();
  // A window of 0 (or larger than the buffer) means one window: fully random.
  const std::size_t window_elements =
      layout.window_bytes == 0
          ? elements
          : std::clamp<std::size_t>(layout.window_bytes / layout.stride, 1, std::max<std::size_t>(elements, 1));
  const std::size_t windows = elements == 0 ? 0 : (elements + window_elements - 1) / window_elements;

  SplitMix64 rng(seed);
  std::vector<std::uint32_t> window_order(windows);
  std::iota(window_order.begin(), window_order.end(), 0u);
  Shuffle(window_order.begin(), window_order.end(), rng);

  std::vector<std::uint32_t> order;
  order.reserve(elements);
  for (const std::uint32_t w : window_order) {
    const std::size_t first = w * window_elements;
    const std::size_t last = std::min(first + window_elements, elements);
    const auto window_start = static_cast<std::ptrdiff_t>(order.size());
    for (std::size_t e = first; e < last; ++e) order.push_back(static_cast<std::uint32_t>(e));
    Shuffle(order.begin() + window_start, order.end(), rng);
  }
  return order;
}

void LinkChase(std::byte* base, const ChaseLayout& layout, const std::vector<std::uint32_t>& order) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t next = order[(i + 1) % order.size()];
    void* target = base + next * layout.stride;
    std::memcpy(base + std::size_t{order[i]} * layout.stride, &target, sizeof(target));
  }
}

bool IsSingleCycle(const std::byte* base, const ChaseLayout& layout) {
  const std::size_t elements = layout.elements();
  if (elements == 0) return false;
  const auto lo = reinterpret_cast<std::uintptr_t>(base);
  std::vector<bool> visited(elements, false);
  std::size_t current = 0;
  for (std::size_t step = 0; step < elements; ++step) {
    if (visited[current]) return false;
    visited[current] = true;
    const std::uintptr_t link = LoadLink(base + current * layout.stride);
    if (link < lo) return false;
    const std::uintptr_t offset = link - lo;
    if (offset % layout.stride != 0 || offset / layout.stride >= elements) return false;
    current = offset / layout.stride;
  }
  return current == 0;
}

void* Chase(void* start, std::uint64_t loads) {
  constexpr std::uint64_t kUnroll = 16;
  void* p = start;
  for (std::uint64_t block = loads / kUnroll; block > 0; --block) {
#pragma GCC unroll 16
    for (std::uint64_t i = 0; i < kUnroll; ++i) p = *static_cast<void**>(p);
    // The empty asm claims to read and change p: the compiler can neither
    // fold the chain nor move loads across blocks.
    asm volatile("" : "+r"(p));
  }
  for (std::uint64_t i = loads % kUnroll; i > 0; --i) {
    p = *static_cast<void**>(p);
    asm volatile("" : "+r"(p));
  }
  return p;
}

}  // namespace numaprobe::kernels
