// SPDX-License-Identifier: Apache-2.0
// 64-byte aligned scratch memory filled with 0xA5, for the tests of the
// bandwidth loops: a byte a loop wrote no longer reads 0xA5.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace numaprobe::kernels {

inline constexpr std::uint64_t kScratchFill = 0xA5A5A5A5A5A5A5A5;

struct Scratch {
  explicit Scratch(std::size_t n) : bytes(n), data(static_cast<std::byte*>(std::aligned_alloc(64, n))) {
    std::memset(data, 0xA5, n);
  }
  ~Scratch() { std::free(data); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // The 8-byte word at byte offset i.
  std::uint64_t Word(std::size_t i) const {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    return w;
  }
  std::size_t bytes;
  std::byte* data;
};

}  // namespace numaprobe::kernels
