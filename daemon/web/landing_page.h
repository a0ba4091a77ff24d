// SPDX-License-Identifier: Apache-2.0
// The HTML page at "/": what this exporter is, links to its endpoints, the
// host it measures and the current latency and bandwidth matrices. Like
// /metrics it only formats the last published Snapshot.
#pragma once

#include <string>

#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

// A complete HTML document. `telemetry_path` is where /metrics is served.
std::string RenderLandingPage(const Snapshot& snapshot, const std::string& telemetry_path);

}  // namespace numaprobe::daemon
