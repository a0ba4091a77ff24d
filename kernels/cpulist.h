// SPDX-License-Identifier: Apache-2.0
// The kernel's list format for CPU and node sets ("0-3,8,10-11"), used by sysfs
// (cpu/online, node/nodeN/cpulist), cpusets and numaprobe's own flags.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace numaprobe::kernels {

// Sorted, duplicate-free ids, or a kInvalidSpec failure naming the bad token.
Expected<std::vector<int>> ParseCpuList(std::string_view text);

// Whether `id` is in the list (any order).
inline bool ListHas(const std::vector<int>& ids, int id) {
  for (int x : ids)
    if (x == id) return true;
  return false;
}

// Inverse of ParseCpuList: {0,1,2,3,8} -> "0-3,8".
std::string FormatCpuList(const std::vector<int>& ids);

}  // namespace numaprobe::kernels
