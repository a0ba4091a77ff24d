// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/loaded_latency.cc: the chase and load threads of one
// validated, placement-checked MeasureLoadedLatency() call.
#pragma once

#include "kernels/loaded_latency.h"

namespace numaprobe::kernels {

// Expects `spec` valid for the buffers and result.isa resolved. Starts one
// pinned load thread per spec.load_cpus entry and one pinned chase thread,
// joins them all before returning, and fills outcome, reason, points,
// spins_per_ns and cpu_seconds.
void RunLoadedLatency(LatencyBuffer& chase, BandwidthBuffer& load, const LoadedLatencySpec& spec,
                      LoadedLatencyResult& result);

}  // namespace numaprobe::kernels
