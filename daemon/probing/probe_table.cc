#include "daemon/probing/probe_table.h"

#include <algorithm>

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

const ProbeKind* FindProbeKind(std::string_view name) {
  const auto& table = ProbeTable();
  const auto it = std::find_if(table.begin(), table.end(), [&](const ProbeKind* kind) { return kind->name() == name; });
  return it == table.end() ? nullptr : *it;
}

}  // namespace numaprobe::daemon
