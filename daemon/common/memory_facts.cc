// SPDX-License-Identifier: Apache-2.0
// The memory half of the runtime facts: what each node holds, its hugepage
// pools, what EDAC says about the DIMMs and their errors, poisoned memory.
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "daemon/common/runtime_facts.h"
#include "daemon/common/sysfs_values.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

// The kB figure of `key` in a meminfo text ("Node 0 MemTotal:  8000 kB" or
// "HardwareCorrupted:  0 kB"), in bytes.
std::optional<unsigned long long> MeminfoBytes(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(key + ":");
    if (at == std::string::npos || (at > 0 && line[at - 1] != ' ')) continue;
    std::istringstream rest(line.substr(at + key.size() + 1));
    unsigned long long kib = 0;
    std::string unit;
    if (rest >> kib >> unit && unit == "kB") return kib * 1024;
  }
  return std::nullopt;
}

std::string OrUnknown(const std::optional<unsigned long long>& value) {
  return value ? std::to_string(*value) : kUnknownFact;
}

void ReadNodes(const FactRoots& roots, RuntimeFacts& facts) {
  const std::string base = roots.sys + "/devices/system/node";
  for (const int id : NumberedEntries(base, "node")) {
    NodeMemory node;
    node.node = id;
    const std::string dir = fmt::format("{}/node{}", base, id);
    if (const auto meminfo = kernels::ReadSmallFile(dir + "/meminfo")) {
      node.mem_total_bytes = MeminfoBytes(*meminfo, "MemTotal");
    }
    const std::string field = fmt::format("node{}.mem_total_bytes", id);
    facts.fields[field] = OrUnknown(node.mem_total_bytes);
    if (!node.mem_total_bytes) facts.unknown.push_back(field);
    // "hugepages-2048kB": the size is in the middle of the name.
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir + "/hugepages", error)) {
      const std::string name = entry.path().filename().string();
      unsigned long long kib = 0;
      if (std::sscanf(name.c_str(), "hugepages-%llukB", &kib) != 1) continue;
      const std::string pool_field = fmt::format("node{}.hugepages_{}kB", id, kib);
      const auto pages = ReadNumber(entry.path().string() + "/nr_hugepages");
      facts.fields[pool_field] = OrUnknown(pages);
      if (pages) {
        node.hugepages[kib * 1024] = *pages;
      } else {
        facts.unknown.push_back(pool_field);
      }
    }
    facts.nodes.push_back(std::move(node));
  }
}

// "controllers=2 dimms=8 size_mib=131072 types=DDR4", or "no_edac" without an
// EDAC driver (most guests, and hosts whose platform driver is not loaded).
void ReadEdac(const FactRoots& roots, RuntimeFacts& facts) {
  const std::string base = roots.sys + "/devices/system/edac/mc";
  const std::vector<int> controllers = NumberedEntries(base, "mc");
  if (controllers.empty()) {
    facts.fields["edac_memory"] = "no_edac";
    return;
  }
  MemoryErrorCounts errors;
  int dimms = 0;
  unsigned long long mib = 0;
  std::set<std::string> types;
  for (const int mc : controllers) {
    const std::string dir = fmt::format("{}/mc{}", base, mc);
    errors.corrected += ReadNumber(dir + "/ce_count").value_or(0);
    errors.uncorrected += ReadNumber(dir + "/ue_count").value_or(0);
    // Newer drivers name them dimm<N>, older ones rank<N>.
    for (const char* kind : {"dimm", "rank"}) {
      for (const int d : NumberedEntries(dir, kind)) {
        const std::string dimm = fmt::format("{}/{}{}", dir, kind, d);
        const unsigned long long size = ReadNumber(dimm + "/size").value_or(0);
        if (size == 0) continue;  // an empty slot
        ++dimms;
        mib += size;
        if (const std::string type = kernels::ReadFirstLine(dimm + "/dimm_mem_type"); !type.empty()) {
          types.insert(type);
        }
      }
    }
  }
  std::string type_list;
  for (const auto& t : types) type_list += (type_list.empty() ? "" : ",") + t;
  facts.fields["edac_memory"] = fmt::format("controllers={} dimms={} size_mib={} types={}", controllers.size(), dimms,
                                            mib, type_list.empty() ? "unknown" : type_list);
  facts.memory_errors = errors;
}

}  // namespace

void ReadMemoryFacts(const FactRoots& roots, RuntimeFacts& facts) {
  ReadNodes(roots, facts);
  ReadEdac(roots, facts);
  if (const auto meminfo = kernels::ReadSmallFile(roots.proc + "/meminfo")) {
    facts.hardware_corrupted_bytes = MeminfoBytes(*meminfo, "HardwareCorrupted");
  }
  facts.fields["hardware_corrupted_bytes"] = OrUnknown(facts.hardware_corrupted_bytes);
  if (!facts.hardware_corrupted_bytes) facts.unknown.push_back("hardware_corrupted_bytes");
}

}  // namespace numaprobe::daemon
