// SPDX-License-Identifier: Apache-2.0
// What a new plan (at start, on a reload, after a cpuset change) makes the
// daemon run, as the scheduler loop adopts it: the targets of a round's tasks
// (the CPUs whose runtime host facts are read, host_observer.h), the tasks on
// a schedule of their own (own_schedule.h), and every baseline series of both
// (what the results model keeps baselines of); and the log lines that tell
// the operator what the plan runs each round.
//
// Thread safety: values and functions.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/probing/series_key.h"
#include "daemon/serve/round_tasks.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct PlannedRuns {
  std::vector<ProbeTarget> round_targets;         // RoundTasks', in order
  std::map<const ProbeKind*, int> round_runs_of;  // RoundTasks' runs by kind
  std::vector<Task> own;                          // OwnScheduleTasks
  std::set<SeriesKey> series;                     // every baseline series of both
};

PlannedRuns RunsOfPlan(const Plan& plan, const Config& config, const kernels::Topology& topology);

// Logs the plan's notes and its runs per round, by kind in probe-table order.
void LogPlan(const Plan& plan, const PlannedRuns& runs);

}  // namespace numaprobe::daemon
