// SPDX-License-Identifier: Apache-2.0
// What a configuration would do to the baselines the daemon has recorded:
// which kinds' measurement settings it changes (so their series record new
// baselines and raise no drift alert meanwhile), how many series that
// disarms, and how long re-recording takes on this host (the sizing preview
// at the task costs the daemon learnt). `numaprobe check-config` prints it
// before an operator reloads, as `promtool` warns before a change lands.
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.h"

namespace numaprobe::daemon {

// Lines for people, none when nothing re-records or the configuration's state
// directory holds no readable state file (nothing recorded yet: a first start
// records every series anyway).
std::vector<std::string> BaselineImpact(const Config& config);

}  // namespace numaprobe::daemon
