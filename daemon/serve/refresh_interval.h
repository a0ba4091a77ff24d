// SPDX-License-Identifier: Apache-2.0
// How often each series gets a figure, as the schedule now runs: what its
// staleness is judged against (results/derived.h, RefreshOf) and what
// numaprobe_refresh_interval_seconds exports. A representative (rotation.h)
// gets one every round; any other series once a cycle of rotated rounds; a
// kind on a schedule of its own (own_schedule.h) once its interval. A round
// never counts as shorter than the configured interval, nor, when it overran
// it, as shorter than it took.
//
// Thread safety: values.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "daemon/config/config.h"
#include "daemon/serve/results/derived.h"
#include "daemon/serve/rotation.h"

namespace numaprobe::daemon {

// After a complete round of `rotation`, in `rounds` rounds a cycle, that took
// `round_seconds`, under `config`; `own_schedule_seconds`: each own-schedule
// kind's interval (OwnScheduleQueue::IntervalSeconds).
RefreshOf RefreshAfterRound(const Rotation& rotation, int rounds, double round_seconds, const Config& config,
                            std::map<std::string, double, std::less<>> own_schedule_seconds);

}  // namespace numaprobe::daemon
