// SPDX-License-Identifier: Apache-2.0
// Host settings that move NUMA latency and bandwidth and can change while
// the daemon runs: transparent huge pages, automatic NUMA balancing, the CPU
// frequency governor and energy-performance preference of the probing CPUs,
// the kernel command line, memory tiering, each node's memory and hugepage
// pools, EDAC memory and its errors, poisoned memory. All read without root
// from sysfs and procfs, every round and on SIGHUP; a file that is missing or
// unreadable makes its fact "unknown", never an error.
//
// Every fact is a field -> value string in `fields` (what the baseline keeps
// and compares; its changes are the host change events); the numbers among
// them are also kept as numbers for gauges.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/weighted_interleave.h"

namespace numaprobe::daemon {

inline constexpr const char* kUnknownFact = "unknown";

struct NodeMemory {
  int node = -1;
  std::optional<unsigned long long> mem_total_bytes;  // node<N>/meminfo MemTotal
  // Page size in bytes -> pages in the node's persistent pool (nr_hugepages).
  std::map<unsigned long long, unsigned long long> hugepages;
};

// EDAC's counters summed over every memory controller (never reset by numaprobe).
struct MemoryErrorCounts {
  unsigned long long corrected = 0;
  unsigned long long uncorrected = 0;
};

struct RuntimeFacts {
  std::map<std::string, std::string> fields;
  std::vector<NodeMemory> nodes;
  std::optional<MemoryErrorCounts> memory_errors;              // nullopt: no EDAC driver
  std::optional<unsigned long long> hardware_corrupted_bytes;  // /proc/meminfo HardwareCorrupted
  // The kernel's interleave weights; nullopt before Linux 6.9 (no fields then either).
  std::optional<WeightedInterleave> weighted_interleave;
  // Fields read as "unknown" this time, for the caller to log once.
  std::vector<std::string> unknown;
};

// Where the trees are: "/proc" and "/sys", or a fixture's.
struct FactRoots {
  std::string proc = "/proc";
  std::string sys = "/sys";
};

// `probe_cpus` maps each node to the CPUs that probe on it: their governor
// and energy-performance preference are the node's ("mixed" when they differ).
RuntimeFacts ReadRuntimeFacts(const FactRoots& roots, const std::map<int, std::vector<int>>& probe_cpus);

// The memory facts (node memory, hugepage pools, EDAC, HardwareCorrupted) into `facts`.
void ReadMemoryFacts(const FactRoots& roots, RuntimeFacts& facts);

}  // namespace numaprobe::daemon
