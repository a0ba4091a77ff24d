// SPDX-License-Identifier: Apache-2.0
// The probe kinds, one module each under probing/kinds/. Only the probe table
// (kinds/probe_table.cc) names them; everything else iterates the table.
#pragma once

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

const ProbeKind& LatencyProbe();
const ProbeKind& BandwidthProbe();
const ProbeKind& CoreToCoreProbe();
const ProbeKind& LoadedLatencyProbe();
const ProbeKind& PeakBandwidthProbe();
const ProbeKind& InterleaveBandwidthProbe();

// Ends the help text of every kind's figures: a scrape reads them, it does not
// cause a measurement.
inline constexpr const char* kCachedHelp = ". From the last scheduled probe, not measured at scrape time.";

}  // namespace numaprobe::daemon
