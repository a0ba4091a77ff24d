// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/bandwidth.cc: runs the warm-up and timed bursts of one
// validated, placement-checked MeasureBandwidth() call.
#pragma once

#include "kernels/bandwidth.h"

namespace numaprobe::kernels {

// Expects result.isa and result.bytes_per_burst to be set and `spec` to be
// valid. Starts one pinned thread per spec.cpus entry, joins them all before
// returning, and fills outcome, reason, bytes_per_second, bytes_total,
// discards, cpu_seconds and burst_offsets.
void RunBursts(BandwidthBuffer& buffer, const BandwidthRunSpec& spec, BandwidthResult& result);

}  // namespace numaprobe::kernels
