// SPDX-License-Identifier: Apache-2.0
// FNV-1a, 64 bit: stable across compilers, libraries and restarts, unlike
// std::hash, for values kept in the state file or compared across restarts
// (the host fingerprint, the kernel command line). Collision resistance
// against an adversary is not needed there.
#pragma once

#include <cstdint>
#include <string_view>

namespace numaprobe::daemon {

inline std::uint64_t Fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace numaprobe::daemon
