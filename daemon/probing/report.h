// SPDX-License-Identifier: Apache-2.0
// Everything one `numaprobe probe` run measured, in run order. The terminal
// table and the JSON output are two readers of this one value.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "daemon/common/host_info.h"
#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

struct ProbeReport {
  HostInfo host;
  std::vector<RecordPtr> records;
  std::vector<int> memory_nodes;                 // the nodes with memory (what there is to interleave)
  std::vector<int> cpu_nodes;                    // the nodes with CPUs
  std::map<std::pair<int, int>, int> distances;  // SLIT, (from node, to node)

  bool all_ok() const;
  // The records of `kind`, in run order.
  std::vector<RecordPtr> Of(const ProbeKind& kind) const;
};

}  // namespace numaprobe::daemon
