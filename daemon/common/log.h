// SPDX-License-Identifier: Apache-2.0
// Logging set-up, node_exporter style: --log.level (debug, info, warn, error)
// and --log.format (logfmt, json), to stderr (journald and kubectl logs pick it up).
#pragma once

#include <string>

namespace numaprobe::daemon {

// Returns "" or an error naming the bad value.
std::string SetUpLogging(const std::string& level, const std::string& format);

// The one-shot commands (probe, topology, ...): messages go to stderr as
// "numaprobe: ...", never to stdout, which carries tables and JSON.
void SetUpCommandLogging();

}  // namespace numaprobe::daemon
