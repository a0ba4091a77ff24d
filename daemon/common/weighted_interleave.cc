// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/weighted_interleave.h"

#include <filesystem>

#include <fmt/format.h>

#include "daemon/common/sysfs_values.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {

std::optional<WeightedInterleave> ReadWeightedInterleave(const std::string& sys_root) {
  const std::string dir = sys_root + "/kernel/mm/mempolicy/weighted_interleave";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return std::nullopt;
  WeightedInterleave wi;
  // The kernel writes "true"/"false" (str_true_false) and accepts kstrtobool
  // spellings on writes; read those too, so a fixture or backport with Y/N is
  // not "unknown".
  const std::string automatic = kernels::ReadFirstLine(dir + "/auto");
  if (automatic == "Y" || automatic == "y" || automatic == "1" || automatic == "true") wi.auto_mode = true;
  if (automatic == "N" || automatic == "n" || automatic == "0" || automatic == "false") wi.auto_mode = false;
  for (const int node : NumberedEntries(dir, "node")) {
    const auto weight = ReadNumber(fmt::format("{}/node{}", dir, node));
    // The kernel refuses 0 and anything over 255; a file outside that is not
    // a weight the kernel uses, so it is not reported as one.
    if (weight && *weight >= 1 && *weight <= 255) wi.weights[node] = static_cast<int>(*weight);
  }
  return wi;
}

std::string WeightsFact(const std::map<int, int>& weights) {
  std::string text;
  for (const auto& [node, weight] : weights) text += fmt::format("{}{}:{}", text.empty() ? "" : ",", node, weight);
  return text;
}

}  // namespace numaprobe::daemon
