// SPDX-License-Identifier: Apache-2.0
// Measures what a task of each enabled kind costs on this host, for the sizing
// preview when no costs are given and the state file has none: for each kind,
// one visit of two tasks on the plan's first memory node (the first task
// prepares the buffers, the second reuses them), run exactly as the daemon
// runs them (the worker at the configured priority, the probe lock held).
// A second or so of CPU.
//
// Thread safety: one call at a time.
#pragma once

#include "daemon/config/config.h"
#include "daemon/serve/task_cost_estimate.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

kernels::Expected<TaskCostEstimate> MeasureTaskCosts(const Config& config, const kernels::Topology& host);

}  // namespace numaprobe::daemon
