// SPDX-License-Identifier: Apache-2.0
// What one round probes: the plan's targets for every enabled kind, as tasks
// in the order that lets consecutive tasks share buffers.
#pragma once

#include <optional>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_kind.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// One probe run of a round.
struct Task {
  const ProbeKind* kind = nullptr;
  ProbeTarget target;
  int attempt = 0;  // a disturbed run is retried once within the round
  // A run that confirms a suspicious figure (SeriesHistory::NeedsConfirmation):
  // its own figure is never confirmed again.
  bool confirmation = false;
  // What the kind's thread search found for the series (ResultModel::
  // FoundThreads), set by the scheduler just before the run.
  std::optional<int> found_threads = std::nullopt;
  // The published figures of every kind when the run starts
  // (ProbeRunner::published), set by the scheduler just before the run.
  std::vector<RecordPtr> published = {};
};

// Consecutive tasks of one kind on one memory node (the read, write and copy
// bandwidth probes of a pair, and the pairs of every CPU node reading that
// memory node) use the same buffers: the scheduler runs them back to back as
// one visit, prepares the buffers once, frees them after the visit, and takes
// the budget's pause after it. Preparing (faulting in) a 256 MiB bandwidth
// buffer costs more CPU than the three measurements.
// A confirmation run shares buffers with nothing: each is a visit of its own,
// after the budget's pause, so that its figure is a fresh measurement minutes
// after the suspicious one rather than a repeat within the same disturbance.
bool SharesBuffers(const Task& a, const Task& b);

// The tasks of one round for the kinds `config` enables: in probe-table order
// (latency, then bandwidth per op, then core-to-core, ...), and within a kind
// grouped by memory node, so that an N-node host prepares N buffers per kind
// and round, not N x N. Kinds on a schedule of their own are not in rounds.
std::vector<Task> RoundTasks(const Plan& plan, const Config& config, const kernels::Topology& topology);
// The tasks of the enabled kinds on a schedule of their own
// (ProbeKind::OwnScheduleOf), in the same order: serve/own_schedule.h runs them.
std::vector<Task> OwnScheduleTasks(const Plan& plan, const Config& config, const kernels::Topology& topology);

// Queues `runs` confirmation runs of `round[current]` as the next visits: after
// the visit `current` belongs to (whose buffers are in use), before anything else.
void QueueConfirmations(std::vector<Task>& round, std::size_t current, int runs);

// The runs `round[current]` calls for, having ended with `outcome`: a
// disturbed first attempt is retried once at the end of the round (within
// the budget); a figure beyond its band gets `confirmations` confirmation
// runs next (QueueConfirmations; 0: none).
void QueueFollowUps(std::vector<Task>& round, std::size_t current, kernels::Outcome outcome, int confirmations);

}  // namespace numaprobe::daemon
