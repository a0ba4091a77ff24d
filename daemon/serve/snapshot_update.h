// SPDX-License-Identifier: Apache-2.0
// How probe results change the published Snapshot: pure functions, so the
// rules (which figures are published, what is counted) are unit-tested
// without running probes. They hold for every kind in the probe table.
#pragma once

#include <string>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/serve/snapshot.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Static facts of a (re)planned daemon: host, distances, and zeroed
// counters for every series known in advance. Figures of series that left the
// plan are dropped; counters are kept (they are monotonic).
void PlanSnapshot(Snapshot& s, const Config& config, const kernels::Topology& topology, const Plan& plan,
                  const HostInfo& host, const std::string& fingerprint);

// Counts the run by outcome, charges `cost_seconds` of CPU, counts discards
// and placement failures, and publishes or withdraws the figure: a placement
// failure withdraws it (never publish a figure whose memory may be
// elsewhere); other failures leave the last good figure, whose age shows in
// numaprobe_probe_last_success_timestamp_seconds, until that series has failed
// three runs in a row (see WithdrawsFigure in snapshot_update.cc).
void RecordRun(Snapshot& s, const RecordPtr& record, double unix_now, double cost_seconds);

}  // namespace numaprobe::daemon
