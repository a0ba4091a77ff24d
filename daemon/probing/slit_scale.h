// SPDX-License-Identifier: Apache-2.0
// A measured distance on the firmware's SLIT scale: 10 for the local pair,
// 10 x remote/local latency for the others, rounded to the SLIT's integers.
// One definition for every place that publishes it (the latency kind's
// numaprobe_memory_latency_distance, the node feature file), so that a
// scheduler reading firmware distances (NodeResourceTopology) can take these
// in their place and both always agree.
#pragma once

#include <cmath>

namespace numaprobe::daemon {

inline double SlitScale(double remote_over_local) { return std::round(10 * remote_over_local); }

}  // namespace numaprobe::daemon
