// SPDX-License-Identifier: Apache-2.0
// How the log tells of a probe run, by its name ("latency cpu 3 -> node 1"):
// its start at debug, saying when it is a run beyond the schedule (a
// confirmation, a retry); its end at debug when ok, at info when skipped
// (routine on a busy host: counted in numaprobe_probe_runs_total and retried
// later), as a warning otherwise, naming the task limit reached when a thread
// could not be created; a cancelled run says nothing. Confirmation runs
// queued after it are said at debug.
//
// Thread safety: functions; spdlog is thread-safe.
#pragma once

#include "daemon/serve/probe_executor.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {

void LogRunStart(const Task& task);
// `ran`: what the executor returned; `confirmations`: the confirmation runs
// its figure earned (0: none).
void LogRunEnd(const Task& task, const ProbeRun& ran, int confirmations);

}  // namespace numaprobe::daemon
