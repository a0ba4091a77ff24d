// SPDX-License-Identifier: Apache-2.0
// Which CPUs of a node a probe measures from, chosen when the probe starts.
//
// Production hosts are busy. A probe pinned to a fixed CPU that a workload
// keeps busy is preempted (the daemon probes at SCHED_IDLE) and discards every
// sample, while another CPU of the same node is idle. A figure means "from a
// CPU of cpu_node to memory on mem_node", so any CPU of cpu_node measures the
// same thing: the chooser takes the one that was idle over the last 100 ms.
// Never an isolated or nohz_full CPU (they belong to latency-critical work),
// never one outside the process's affinity/cpuset (the Topology holds only
// allowed CPUs). CPUs named by the operator (--cpus, --per-cpu, c2c_cpus)
// are kept as named: only CPUs the plan picked for a node move.
//
// Thread safety: not thread-safe; used by the one thread that runs probes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/probing/plan.h"
#include "kernels/cpu_idle.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct CpuChooserSources {
  std::function<kernels::CpuTimes()> read_times = [] { return kernels::ReadCpuTimes(); };
  std::string isolated = "/sys/devices/system/cpu/isolated";
  std::string nohz_full = "/sys/devices/system/cpu/nohz_full";
  std::chrono::milliseconds window{100};  // how long "idle now" looks back
};

struct CpuChoice {
  std::vector<int> cpus;  // the measuring CPU first, then helpers for multi-thread probes
  std::string why;        // non-empty when cpus[0] is not the planned CPU: "cpu 3 busy 97%"
};

class CpuChooser {
 public:
  explicit CpuChooser(const kernels::Topology& topology, CpuChooserSources sources = {});

  // `count` CPUs of pair.cpu_node. A pair whose CPU the plan picked
  // (pair.any_cpu_of_node) measures from the idlest eligible CPU, keeping the
  // planned one unless another is clearly idler; any other pair keeps
  // pair.cpu. Further CPUs follow, the idlest first, distinct cores before SMT
  // siblings (a sibling shares the core's load ports and fill buffers).
  CpuChoice Choose(const MemoryPair& pair, int count);
  // Busy share of each CPU over the next `window` (waits it); empty when the
  // counters cannot be read.
  std::map<int, double> SampleBusy(std::chrono::milliseconds window) const;

 private:
  // CPUs of `node` a probe may use: allowed, not isolated, not nohz_full.
  std::vector<int> Eligible(int node) const;

  const kernels::Topology& topology_;
  CpuChooserSources sources_;
  std::vector<int> reserved_;  // isolated + nohz_full, read once
};

}  // namespace numaprobe::daemon
