// SPDX-License-Identifier: Apache-2.0
// The weights the kernel gives MPOL_WEIGHTED_INTERLEAVE allocations (Linux
// 6.9+): /sys/kernel/mm/mempolicy/weighted_interleave/nodeN, 1..255 pages of
// each node per round, and since 6.16 `auto` (Y: the kernel sets the weights
// itself from the firmware's bandwidth figures; N: an administrator wrote
// them). Read without root. An older kernel has no directory: no weights,
// not an error.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace numaprobe::daemon {

struct WeightedInterleave {
  std::optional<bool> auto_mode;  // nullopt: kernel 6.9-6.15, no `auto` file
  std::map<int, int> weights;     // node -> weight; a node whose file is unreadable is left out
};

// nullopt when the kernel has no weighted interleave (the directory is absent).
std::optional<WeightedInterleave> ReadWeightedInterleave(const std::string& sys_root = "/sys");

// The host-fact values: "0:3,1:1" (node:weight in node order) and "true"/"false".
std::string WeightsFact(const std::map<int, int>& weights);

}  // namespace numaprobe::daemon
