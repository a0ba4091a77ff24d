#include "daemon/probing/probe_table.h"

#include "daemon/probing/kinds/kinds.h"

namespace numaprobe::daemon {

const std::vector<const ProbeKind*>& ProbeTable() {
  static const std::vector<const ProbeKind*> table{
      &LatencyProbe(),
      &BandwidthProbe(),
      &CoreToCoreProbe(),
      &LoadedLatencyProbe(),
  };
  return table;
}

}  // namespace numaprobe::daemon
