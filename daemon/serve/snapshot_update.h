// How probe results change the published Snapshot: pure functions, so the
// rules (which figures are published, what is counted) are unit-tested
// without running probes.
#pragma once

#include <string>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/serve/snapshot.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Static facts of a (re)planned daemon: host, distances, budget, and zeroed
// counters for every series known in advance. Figures for pairs that left the
// plan are dropped; counters are kept (they are monotonic).
void PlanSnapshot(Snapshot& s, const Config& config, const kernels::Topology& topology, const Plan& plan,
                  const HostInfo& host, const std::string& fingerprint);

// Each counts the run by outcome, charges `cost_seconds` of CPU, counts
// discards and placement failures, and publishes or withdraws the figure:
// a placement failure withdraws it (never publish a figure whose memory may be
// elsewhere); other failures leave the last good figure, whose age shows in
// numaprobe_probe_last_success_timestamp_seconds, until that series has failed
// three runs in a row (see WithdrawsFigure in snapshot_update.cc).
void RecordLatency(Snapshot& s, const LatencyRecord& record, double unix_now, double cost_seconds);
void RecordBandwidth(Snapshot& s, const BandwidthRecord& record, double unix_now, double cost_seconds);
void RecordC2c(Snapshot& s, const C2cRecord& record, int cpu_a_node, double unix_now, double cost_seconds);

}  // namespace numaprobe::daemon
