// SPDX-License-Identifier: Apache-2.0
// The one list that names every kind (kinds.h); everything else iterates it.
#include "daemon/probing/probe_table.h"

#include "daemon/probing/kinds/kinds.h"

namespace numaprobe::daemon {

const std::vector<const ProbeKind*>& ProbeTable() {
  static const std::vector<const ProbeKind*> table{
      &LatencyProbe(),       &BandwidthProbe(),     &CoreToCoreProbe(),
      &LoadedLatencyProbe(), &PeakBandwidthProbe(), &InterleaveBandwidthProbe(),
  };
  return table;
}

const KindSections& ProbeTableSections() {
  static const KindSections sections(ProbeTable().begin(), ProbeTable().end());
  return sections;
}

std::vector<std::string> TestScaledKinds() {
  std::vector<std::string> names;
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->traits().test_scaled) names.emplace_back(kind->name());
  }
  return names;
}

}  // namespace numaprobe::daemon
