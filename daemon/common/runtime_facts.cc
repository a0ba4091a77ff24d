// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/runtime_facts.h"

#include <fmt/format.h>

#include "daemon/common/kernel_cmdline.h"
#include "daemon/common/printable_text.h"
#include "daemon/common/sysfs_values.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

using kernels::ReadFirstLine;

class Reader {
 public:
  explicit Reader(RuntimeFacts& facts) : facts_(facts) {}

  // `field` := the file's first line (through `shape`), "unknown" if missing or empty.
  void Line(const std::string& field, const std::string& path, std::string (*shape)(const std::string&) = nullptr) {
    std::string value = ReadFirstLine(path);
    if (shape != nullptr && !value.empty()) value = shape(value);
    Set(field, value);
  }

  void Set(const std::string& field, const std::string& value) {
    if (value.empty()) {
      facts_.fields[field] = kUnknownFact;
      facts_.unknown.push_back(field);
    } else {
      facts_.fields[field] = value;
    }
  }

 private:
  RuntimeFacts& facts_;
};

// The CPUs' common value of a cpufreq attribute: "" if none is readable (no
// cpufreq driver, typical in guests), "mixed" when they differ.
std::string CommonValue(const std::string& sys, const std::vector<int>& cpus, const char* attribute) {
  std::string common;
  for (const int cpu : cpus) {
    const std::string value = ReadFirstLine(fmt::format("{}/devices/system/cpu/cpu{}/cpufreq/{}", sys, cpu, attribute));
    if (value.empty()) continue;
    if (common.empty()) {
      common = value;
    } else if (common != value) {
      return "mixed";
    }
  }
  return common;
}

// "tier4:0-2;tier22:3": every memory tier and its nodes, in tier order.
std::string MemoryTiers(const std::string& sys) {
  const std::string dir = sys + "/devices/virtual/memory_tiering";
  std::string tiers;
  for (const int tier : NumberedEntries(dir, "memory_tier")) {
    const std::string nodes = ReadFirstLine(fmt::format("{}/memory_tier{}/nodelist", dir, tier));
    tiers += fmt::format("{}tier{}:{}", tiers.empty() ? "" : ";", tier, nodes);
  }
  return tiers;
}

}  // namespace

RuntimeFacts ReadRuntimeFacts(const FactRoots& roots, const std::map<int, std::vector<int>>& probe_cpus) {
  RuntimeFacts facts;
  Reader read(facts);
  const std::string thp = roots.sys + "/kernel/mm/transparent_hugepage";
  read.Line("thp_enabled", thp + "/enabled", BracketedChoice);
  read.Line("thp_defrag", thp + "/defrag", BracketedChoice);
  read.Line("numa_balancing", roots.proc + "/sys/kernel/numa_balancing");
  for (const auto& [node, cpus] : probe_cpus) {
    read.Set(fmt::format("cpufreq_governor.node{}", node), CommonValue(roots.sys, cpus, "scaling_governor"));
    read.Set(fmt::format("cpufreq_epp.node{}", node), CommonValue(roots.sys, cpus, "energy_performance_preference"));
  }
  if (const auto cmdline = kernels::ReadSmallFile(roots.proc + "/cmdline")) {
    for (auto& [field, value] : CmdlineFacts(*cmdline)) facts.fields[field] = std::move(value);
  } else {
    read.Set("cmdline.other_hash", "");
  }
  read.Line("demotion_enabled", roots.sys + "/kernel/mm/numa/demotion_enabled");
  read.Set("memory_tiers", MemoryTiers(roots.sys));
  // Absent before Linux 6.9 (weights) and 6.16 (auto): no field, not "unknown".
  facts.weighted_interleave = ReadWeightedInterleave(roots.sys);
  if (const auto& wi = facts.weighted_interleave) {
    read.Set("weighted_interleave", WeightsFact(wi->weights));
    if (wi->auto_mode) facts.fields["weighted_interleave_auto"] = *wi->auto_mode ? "true" : "false";
  }
  ReadMemoryFacts(roots, facts);
  for (auto& [field, value] : facts.fields) value = PrintableText(value);
  return facts;
}

}  // namespace numaprobe::daemon
