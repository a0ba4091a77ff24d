// SPDX-License-Identifier: Apache-2.0
// The buffers of the memory kinds, shared between kinds: the latency kind
// chases the chase buffer, the bandwidth kind streams over the stream buffer
// (the peak bandwidth kind over a larger one of its own),
// and loaded_latency uses both at once on the same node, so a visit prepares
// each once (BufferPool).
#pragma once

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/probe_runner.h"
#include "kernels/bandwidth.h"
#include "kernels/latency.h"

namespace numaprobe::daemon {

// The pointer-chase buffer on `node` for a CPU whose LLC is `llc_bytes`.
kernels::Expected<kernels::LatencyBuffer*> ChaseBuffer(ProbeRunner& runner, int node, std::size_t llc_bytes);
// The bandwidth buffer on `node`.
kernels::Expected<kernels::BandwidthBuffer*> StreamBuffer(ProbeRunner& runner, int node);
// The peak bandwidth buffer on `node`, of `bytes` (four bursts of every
// thread it runs: it grows with the node's CPU count).
kernels::Expected<kernels::BandwidthBuffer*> PeakStreamBuffer(ProbeRunner& runner, int node, std::size_t bytes);
// Frees a buffer whose pages were found off `node`, so the next probe builds a fresh one.
void DropChaseBuffer(ProbeRunner& runner, int node);
void DropStreamBuffer(ProbeRunner& runner, int node);
void DropPeakStreamBuffer(ProbeRunner& runner, int node);

}  // namespace numaprobe::daemon
