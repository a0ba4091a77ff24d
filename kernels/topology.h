// SPDX-License-Identifier: Apache-2.0
// The machine as probes see it: CPUs, NUMA nodes (including CPU-less memory
// nodes), SMT siblings, last-level-cache domains and firmware distances,
// restricted to what this process may use.
//
// Topology is a plain value. It is built from hwloc (the host, or an XML /
// synthetic description in tests) plus a Restriction read separately from the
// process (affinity mask, mems_allowed, online CPUs), so tests can build any
// machine without owning one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace numaprobe::kernels {

struct CpuInfo {
  int id = -1;       // OS index (as in /sys/devices/system/cpu/cpuN)
  int core = -1;     // hwloc logical core index: equal for SMT siblings
  int package = -1;  // OS index of the package
  int node = -1;     // NUMA node local to this CPU
  int llc = -1;      // index of its last-level cache domain (Topology::llcs())
};

struct LlcInfo {
  int index = -1;
  std::size_t bytes = 0;
  std::vector<int> cpus;  // allowed CPUs sharing it
};

struct NodeInfo {
  int id = -1;  // OS index
  std::uint64_t memory_bytes = 0;
  std::vector<int> cpus;  // allowed, online CPUs local to this node (empty: CPU-less)
  std::string subtype;    // hwloc subtype when known ("DRAM", "HBM", "CXL-DRAM" ...)
  bool has_memory() const { return memory_bytes > 0; }
};

// What this process may use, read from the kernel (not from hwloc, which only
// knows cgroup restrictions): sched_getaffinity, get_mempolicy(MPOL_F_MEMS_ALLOWED),
// /sys/devices/system/cpu/online. Unset optional = no restriction.
struct Restriction {
  std::optional<std::set<int>> cpus;
  std::optional<std::set<int>> mem_nodes;
  static Restriction FromProcess();
};

// How two CPUs relate, from closest to farthest. Names are a metric contract.
enum class CpuRelation { kSmt, kSameLlc, kSameNode, kCrossNode };
std::string_view CpuRelationName(CpuRelation relation);  // smt, same_llc, same_node, cross_node

class Topology {
 public:
  // This machine; or, with HWLOC_XMLFILE or HWLOC_SYNTHETIC set, what it
  // describes (described_by below).
  static Expected<Topology> FromHost();
  // This machine even when HWLOC_XMLFILE or HWLOC_SYNTHETIC describe another
  // (what is measured here is measured on it). With either set, hwloc loads it
  // in a child process without them (hwloc has no call that ignores them);
  // this process's environment is never changed. The child is forked: call it
  // where no other thread may hold a lock inside hwloc.
  static Expected<Topology> FromThisMachine();
  static Expected<Topology> FromXml(std::string_view xml, const Restriction& restriction);
  static Expected<Topology> FromSynthetic(std::string_view description, const Restriction& restriction);

  // Allowed, online CPUs, ascending id.
  const std::vector<CpuInfo>& cpus() const { return cpus_; }
  // Allowed nodes, ascending id (CPU-less nodes included, memory-less ones too).
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const std::vector<LlcInfo>& llcs() const { return llcs_; }
  // Nodes and CPUs that exist but this process may not use (for reporting).
  const std::vector<int>& disallowed_cpus() const { return disallowed_cpus_; }
  const std::vector<int>& disallowed_nodes() const { return disallowed_nodes_; }

  const CpuInfo* FindCpu(int id) const;
  const NodeInfo* FindNode(int id) const;
  // Firmware (SLIT) distance; 0 when the firmware gave none.
  int Distance(int from_node, int to_node) const;
  bool has_distances() const { return !distances_.empty(); }
  CpuRelation Relation(int cpu_a, int cpu_b) const;
  // LLC size the given CPU can allocate into (0 if unknown).
  std::size_t LlcBytesOf(int cpu) const;

  std::string cpu_model;  // "AMD EPYC 9B14" ...
  // Empty for this system. FromHost with HWLOC_XMLFILE or HWLOC_SYNTHETIC in
  // the environment (hwloc then loads that description instead of this
  // machine) names the variable: such a topology is not this system, so it
  // is taken with every CPU and node allowed and can only be planned, never
  // measured (`numaprobe topology` sizes a big host from anywhere).
  std::string described_by;

 private:
  friend class TopologyBuilder;
  // Host only: the kernel's node distances, for when hwloc reports none (it
  // drops the 1x1 matrix of a single-node machine).
  void ReadKernelDistances();
  std::vector<CpuInfo> cpus_;
  std::vector<NodeInfo> nodes_;
  std::vector<LlcInfo> llcs_;
  std::vector<int> disallowed_cpus_;
  std::vector<int> disallowed_nodes_;
  std::vector<int> distance_node_ids_;  // row/column order of distances_
  std::vector<int> distances_;          // n x n, row-major
};

// hwloc's XML description of this host (disallowed CPUs and nodes included):
// what HWLOC_XMLFILE reads back, so that a host can be planned elsewhere
// (`numaprobe topology --format hwloc-xml`).
Expected<std::string> HostTopologyXml();

}  // namespace numaprobe::kernels
