// SPDX-License-Identifier: Apache-2.0
// Records of each kind built without running a probe, for tests of the
// snapshot, metrics and report views.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "daemon/probing/kinds/core_to_core_plan.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/peak_thread_search.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_kind.h"
#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"

namespace numaprobe::daemon {

inline RecordPtr MakeLatency(const MemoryPair& pair, kernels::LatencyResult result) {
  return std::make_shared<ProbeRecordOf<kernels::LatencyResult>>(LatencyProbe(), MemoryTarget(pair), std::move(result));
}

inline RecordPtr MakeBandwidth(const MemoryPair& pair, kernels::BandwidthResult result) {
  const ProbeTarget target = MemoryTarget(pair, std::string(kernels::BandwidthOpName(result.op)));
  return std::make_shared<ProbeRecordOf<kernels::BandwidthResult>>(BandwidthProbe(), target, std::move(result));
}

inline RecordPtr MakePeak(const MemoryPair& pair, PeakResult result) {
  const ProbeTarget target = MemoryTarget(pair, std::string(kernels::BandwidthOpName(result.op)));
  return std::make_shared<ProbeRecordOf<PeakResult>>(PeakBandwidthProbe(), target, std::move(result));
}

// A successful peak figure of `op` from cpu_node's CPUs (cpu 2 x cpu_node
// stands for them) to mem_node.
inline RecordPtr MakePeakFigure(int cpu_node, int mem_node, kernels::BandwidthOp op, double bytes_per_second) {
  PeakResult r;
  r.op = op;
  r.bytes_per_second.median = bytes_per_second;
  return MakePeak({cpu_node * 2, cpu_node, mem_node}, std::move(r));
}

// A successful idle-latency figure from cpu_node's CPU (2 x cpu_node) to mem_node.
inline RecordPtr MakeLatencyFigure(int cpu_node, int mem_node, double seconds) {
  kernels::LatencyResult r;
  r.seconds_per_load.median = seconds;
  return MakeLatency({cpu_node * 2, cpu_node, mem_node}, std::move(r));
}

// `cpu_a_node`: the node of cpu_a, which keys the health series.
inline RecordPtr MakeC2c(const C2cPair& pair, int cpu_a_node, kernels::C2cResult result) {
  return std::make_shared<ProbeRecordOf<kernels::C2cResult>>(CoreToCoreProbe(), C2cTarget(pair, cpu_a_node),
                                                             std::move(result));
}

}  // namespace numaprobe::daemon
