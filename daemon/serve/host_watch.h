// SPDX-License-Identifier: Apache-2.0
// The daemon's view of its host: HostInfo when the probes are planned, and
// every fact (HostFacts plus the runtime facts) whenever the scheduler looks,
// every round and on SIGHUP. A fact that cannot be read is "unknown" and
// logged once (again only after it was readable in between), never an error.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/common/host_info.h"
#include "daemon/common/runtime_facts.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/serve/results/host_record.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// The CPUs that probe `targets`, by node: a pair's CPU, or every allowed CPU
// of its node when any of them may measure (MemoryPair::any_cpu_of_node), and
// a run's peer CPU.
std::map<int, std::vector<int>> ProbeCpusByNode(const std::vector<ProbeTarget>& targets,
                                                const kernels::Topology& topology);

class HostWatch {
 public:
  // `roots`: "/proc" and "/sys", or a test's fixture tree.
  explicit HostWatch(FactRoots roots = {}) : roots_(std::move(roots)) {}

  HostInfo ReadInfo(const std::string& cpu_model) const;
  // `static_facts` (HostFacts) and the runtime facts read now, for the baseline.
  HostObservation Observe(std::map<std::string, std::string> static_facts,
                          const std::map<int, std::vector<int>>& probe_cpus);
  // The runtime facts Observe last read, for the snapshot.
  const RuntimeFacts& last() const { return last_; }

 private:
  FactRoots roots_;
  RuntimeFacts last_;
  std::set<std::string> unknown_logged_;
};

}  // namespace numaprobe::daemon
