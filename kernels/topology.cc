// SPDX-License-Identifier: Apache-2.0
// Topology queries, Restriction::FromProcess and the kernel's node distances.
// Building a Topology from hwloc lives in topology_hwloc.cc so that this file
// never sees hwloc types.
#include "kernels/topology.h"

#include <numaif.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <sstream>
#include <string>
#include <utility>

#include "kernels/cpulist.h"
#include "kernels/file_read.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
// Upper bounds for the kernel masks we ask for; the kernel rejects a buffer
// smaller than its own nr_cpu_ids / MAX_NUMNODES with EINVAL, so we grow the
// buffer until it fits or this bound is reached.
constexpr std::size_t kMaxCpuBits = std::size_t{1} << 20;
constexpr std::size_t kMaxNodeBits = std::size_t{1} << 16;

std::set<int> MaskToSet(const std::vector<unsigned long>& mask) {
  std::set<int> ids;
  for (std::size_t word = 0; word < mask.size(); ++word) {
    for (std::size_t bit = 0; bit < kBitsPerWord; ++bit) {
      if ((mask[word] >> bit) & 1UL) ids.insert(static_cast<int>(word * kBitsPerWord + bit));
    }
  }
  return ids;
}

// nullopt on garbage, so a malformed file never becomes an empty restriction.
std::optional<std::set<int>> ParseIdList(std::string_view text) {
  auto ids = ParseCpuList(text);
  if (!ids.ok()) return std::nullopt;
  return std::set<int>(ids->begin(), ids->end());
}

std::optional<std::set<int>> ReadIdListFile(const char* path) {
  const std::optional<std::string> text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  return ParseIdList(*text);
}

// "Mems_allowed_list:\t0-1" from /proc/self/status: the fallback when
// get_mempolicy is blocked (container seccomp profiles without CAP_SYS_NICE).
std::optional<std::set<int>> ReadStatusList(std::string_view key) {
  std::istringstream in(ReadSmallFile("/proc/self/status").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      std::string_view value(line);
      value.remove_prefix(key.size() + 1);
      while (!value.empty() && (value.front() == '\t' || value.front() == ' ')) value.remove_prefix(1);
      return ParseIdList(value);
    }
  }
  return std::nullopt;
}

std::optional<std::set<int>> ReadAffinity() {
  for (std::size_t bits = 8192; bits <= kMaxCpuBits; bits *= 2) {
    std::vector<unsigned long> mask(bits / kBitsPerWord, 0);
    // cpu_set_t is an array of unsigned long; a plain word buffer lets the
    // mask be as large as the kernel needs without the C-cast CPU_*_S macros.
    if (sched_getaffinity(0, mask.size() * sizeof(unsigned long), reinterpret_cast<cpu_set_t*>(mask.data())) == 0) {
      return MaskToSet(mask);
    }
    if (errno != EINVAL) break;
  }
  return ReadStatusList("Cpus_allowed_list");
}

std::optional<std::set<int>> ReadMemsAllowed() {
  for (std::size_t bits = 1024; bits <= kMaxNodeBits; bits *= 2) {
    std::vector<unsigned long> mask(bits / kBitsPerWord, 0);
    if (get_mempolicy(nullptr, mask.data(), bits, nullptr, MPOL_F_MEMS_ALLOWED) == 0) return MaskToSet(mask);
    if (errno != EINVAL) break;
  }
  return ReadStatusList("Mems_allowed_list");
}

}  // namespace

Restriction Restriction::FromProcess() {
  Restriction restriction;
  restriction.cpus = ReadAffinity();
  // An offline CPU can still be in the affinity mask; pinning to it fails.
  if (const auto online = ReadIdListFile("/sys/devices/system/cpu/online")) {
    if (restriction.cpus) {
      std::erase_if(*restriction.cpus, [&](int cpu) { return !online->contains(cpu); });
    } else {
      restriction.cpus = online;
    }
  }
  restriction.mem_nodes = ReadMemsAllowed();
  return restriction;
}

// /sys/devices/system/node/nodeN/distance holds one row of the kernel's SLIT
// view: distances to every online node, in ascending node order.
void Topology::ReadKernelDistances() {
  const auto online = ReadIdListFile("/sys/devices/system/node/online");
  if (!online || online->empty()) return;
  std::vector<int> values;
  for (int node : *online) {
    std::istringstream in(ReadFirstLine("/sys/devices/system/node/node" + std::to_string(node) + "/distance"));
    std::size_t row = 0;
    for (int value = 0; in >> value; ++row) values.push_back(value);
    if (row != online->size()) return;  // torn read (hotplug) or unexpected format: keep none
  }
  distance_node_ids_.assign(online->begin(), online->end());
  distances_ = std::move(values);
}

std::string_view CpuRelationName(CpuRelation relation) {
  switch (relation) {
    case CpuRelation::kSmt:
      return "smt";
    case CpuRelation::kSameLlc:
      return "same_llc";
    case CpuRelation::kSameNode:
      return "same_node";
    case CpuRelation::kCrossNode:
      return "cross_node";
  }
  return "unknown";
}

const CpuInfo* Topology::FindCpu(int id) const {
  const auto it =
      std::lower_bound(cpus_.begin(), cpus_.end(), id, [](const CpuInfo& cpu, int value) { return cpu.id < value; });
  return it != cpus_.end() && it->id == id ? &*it : nullptr;
}

const NodeInfo* Topology::FindNode(int id) const {
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), id,
                                   [](const NodeInfo& node, int value) { return node.id < value; });
  return it != nodes_.end() && it->id == id ? &*it : nullptr;
}

int Topology::Distance(int from_node, int to_node) const {
  const auto index_of = [&](int node) -> std::ptrdiff_t {
    const auto it = std::find(distance_node_ids_.begin(), distance_node_ids_.end(), node);
    return it == distance_node_ids_.end() ? -1 : it - distance_node_ids_.begin();
  };
  const std::ptrdiff_t from = index_of(from_node);
  const std::ptrdiff_t to = index_of(to_node);
  if (from < 0 || to < 0) return 0;
  const auto n = static_cast<std::ptrdiff_t>(distance_node_ids_.size());
  return distances_[static_cast<std::size_t>(from * n + to)];
}

// Unknown CPUs compare as kCrossNode: the farthest class is the one that never
// makes a caller assume two CPUs share something they do not.
CpuRelation Topology::Relation(int cpu_a, int cpu_b) const {
  const CpuInfo* a = FindCpu(cpu_a);
  const CpuInfo* b = FindCpu(cpu_b);
  if (a == nullptr || b == nullptr) return CpuRelation::kCrossNode;
  if (a->core >= 0 && a->core == b->core) return CpuRelation::kSmt;
  if (a->llc >= 0 && a->llc == b->llc) return CpuRelation::kSameLlc;
  if (a->node >= 0 && a->node == b->node) return CpuRelation::kSameNode;
  return CpuRelation::kCrossNode;
}

std::size_t Topology::LlcBytesOf(int cpu) const {
  const CpuInfo* info = FindCpu(cpu);
  if (info == nullptr || info->llc < 0 || static_cast<std::size_t>(info->llc) >= llcs_.size()) return 0;
  return llcs_[static_cast<std::size_t>(info->llc)].bytes;
}

}  // namespace numaprobe::kernels
