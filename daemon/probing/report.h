// Everything one `numaprobe probe` run measured, in plan order. The terminal
// table and the JSON output are two readers of this one value.
#pragma once

#include <vector>

#include "daemon/common/host_info.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_runner.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct ProbeReport {
  HostInfo host;
  std::vector<LatencyRecord> latency;
  std::vector<BandwidthRecord> bandwidth;
  std::vector<C2cRecord> c2c;

  bool all_ok() const;
};

}  // namespace numaprobe::daemon
