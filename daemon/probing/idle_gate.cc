// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/idle_gate.h"

#include <fmt/format.h>

namespace numaprobe::daemon {

std::optional<std::string> IdleGateClosed(const std::map<int, double>& busy, const std::vector<int>& cpus,
                                          double max_busy) {
  if (cpus.empty()) return std::nullopt;
  double sum = 0;
  for (int cpu : cpus) {
    if (const auto it = busy.find(cpu); it != busy.end()) sum += it->second;
  }
  const double mean = sum / static_cast<double>(cpus.size());
  if (mean <= max_busy) return std::nullopt;
  return fmt::format("its {} CPU{} were {:.0f}% busy over the last {} ms, above the idle gate of {:.0f}%", cpus.size(),
                     cpus.size() == 1 ? "" : "s", mean * 100, kIdleGateWindow.count(), max_busy * 100);
}

}  // namespace numaprobe::daemon
