// SPDX-License-Identifier: Apache-2.0
// A tiny seeded PRNG (splitmix64) for chase orders and placement sampling.
// Written out rather than std::mt19937_64 + std::shuffle because the standard
// leaves shuffle's algorithm to the library: the same seed must give the same
// chase pattern on every host, or fleet-wide comparisons compare different things.
#pragma once

#include <cstdint>

namespace numaprobe::kernels {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n) for n > 0. The modulo bias is below n / 2^64: irrelevant
  // for buffer sizes, and keeps the sequence trivially portable.
  std::uint64_t Below(std::uint64_t n) { return Next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace numaprobe::kernels
