// The probe kinds, one module each under probing/kinds/. Only the probe table
// (kinds/probe_table.cc) names them; everything else iterates the table.
#pragma once

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

const ProbeKind& LatencyProbe();
const ProbeKind& BandwidthProbe();
const ProbeKind& CoreToCoreProbe();
const ProbeKind& LoadedLatencyProbe();

}  // namespace numaprobe::daemon
