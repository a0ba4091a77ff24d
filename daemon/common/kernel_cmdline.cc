// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/kernel_cmdline.h"

#include <algorithm>

#include <fmt/format.h>

#include "daemon/common/stable_hash.h"

namespace numaprobe::daemon {

const std::vector<std::string_view>& WatchedCmdlineParameters() {
  // NUMA placement, page sizes, CPU idle and frequency, mitigations, IOMMU,
  // isolation: each changes latency or bandwidth by itself.
  static const std::vector<std::string_view> kNames = {"numa",
                                                       "numa_balancing",
                                                       "transparent_hugepage",
                                                       "default_hugepagesz",
                                                       "hugepagesz",
                                                       "hugepages",
                                                       "hugetlb_free_vmemmap",
                                                       "kernelcore",
                                                       "movablecore",
                                                       "movable_node",
                                                       "mitigations",
                                                       "intel_idle.max_cstate",
                                                       "processor.max_cstate",
                                                       "idle",
                                                       "intel_pstate",
                                                       "amd_pstate",
                                                       "cpufreq.default_governor",
                                                       "intel_iommu",
                                                       "amd_iommu",
                                                       "iommu",
                                                       "iommu.passthrough",
                                                       "iommu.strict",
                                                       "isolcpus",
                                                       "nohz_full",
                                                       "nosmt"};
  return kNames;
}

std::map<std::string, std::string> CmdlineFacts(std::string_view cmdline) {
  const auto& watched = WatchedCmdlineParameters();
  std::map<std::string, std::string> values;
  std::string other;
  std::size_t pos = 0;
  while (pos < cmdline.size()) {
    while (pos < cmdline.size() && (cmdline[pos] == ' ' || cmdline[pos] == '\n' || cmdline[pos] == '\t')) ++pos;
    if (pos >= cmdline.size()) break;
    // A quoted value may hold spaces: param="a b".
    std::size_t end = pos;
    bool quoted = false;
    while (end < cmdline.size() && (quoted || (cmdline[end] != ' ' && cmdline[end] != '\n' && cmdline[end] != '\t'))) {
      if (cmdline[end] == '"') quoted = !quoted;
      ++end;
    }
    const std::string_view word = cmdline.substr(pos, end - pos);
    pos = end;
    const auto eq = word.find('=');
    const std::string_view name = word.substr(0, eq);
    const std::string value = eq == std::string_view::npos ? "on" : std::string(word.substr(eq + 1));
    if (std::find(watched.begin(), watched.end(), name) != watched.end()) {
      std::string& slot = values[std::string(name)];
      slot += (slot.empty() ? "" : ",") + value;
    } else if (name != "BOOT_IMAGE" && name != "initrd") {
      other += std::string(word) + ' ';
    }
  }
  std::map<std::string, std::string> facts;
  for (const std::string_view name : watched) {
    const auto it = values.find(std::string(name));
    facts[fmt::format("cmdline.{}", name)] = it == values.end() ? "unset" : it->second;
  }
  facts["cmdline.other_hash"] = fmt::format("{:016x}", Fnv1a64(other));
  return facts;
}

}  // namespace numaprobe::daemon
