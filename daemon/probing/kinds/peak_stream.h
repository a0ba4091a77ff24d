// SPDX-License-Identifier: Apache-2.0
// How the kinds that load every CPU of a node stream (peak_bandwidth, and
// interleave_bandwidth on an interleaved buffer): the same sizes, the same
// idle gate and the same kernel call, so their figures compare.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/probe_runner.h"
#include "kernels/bandwidth.h"

namespace numaprobe::daemon {

// Each thread's share of a burst of `burst_bytes`: whole lines, at least
// 1 MiB so that a thread's part is long beside the barrier between bursts.
std::size_t PeakBurstPerThread(std::size_t burst_bytes, std::size_t threads);

// The buffer holds four bursts of every thread, and at least the configured
// buffer size (256 MiB by default), so that it is far larger than any LLC. Up
// to 64 threads it has one size, so CPU nodes of different sizes share each
// memory node's buffer.
std::size_t PeakBufferBytes(const PeakBandwidthSettings& settings, std::size_t threads);

// Why the idle gate (probes.peak_bandwidth.max_busy) is closed for the CPUs
// of `cpu_node` that could stream (`usable`), or none: open, or no gate (a
// terminal). Call after the probe lock is held and before the buffer is touched.
std::optional<std::string> PeakGateClosed(ProbeRunner& runner, int cpu_node, const std::vector<int>& usable);

// What every whole-node stream does first, once the probe lock is held: the
// CPUs that could stream into result.cpus (the pair's CPU first, then the
// node's other allowed CPUs, distinct cores first; all of them, or the
// configured `threads`), then the idle gate, before any buffer is touched.
// False when the run ends here: cancelled, or skipped by the gate, `result`
// saying why.
bool PeakStreamMayStart(ProbeRunner& runner, const ProbeLockHold& hold, const MemoryPair& pair,
                        const PeakBandwidthSettings& settings, kernels::BandwidthResult& result);

// The first `count` of `cpus` streaming `op` together over `buffer` with the
// peak settings; `test_scale` is the kind's test fault injection factor.
kernels::BandwidthResult MeasurePeakStream(ProbeRunner& runner, kernels::BandwidthBuffer& buffer,
                                           const std::vector<int>& cpus, std::size_t count, kernels::BandwidthOp op,
                                           double test_scale, const std::atomic<bool>* stop);

}  // namespace numaprobe::daemon
