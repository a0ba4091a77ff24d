// The kernel-facing settings a Config implies, shared by the daemon and by
// `numaprobe probe`'s defaults, so the CLI and the daemon measure the same way.
#pragma once

#include "daemon/config/config.h"
#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/probe_runner.h"

namespace numaprobe::daemon {

ProbeSettings ProbeSettingsFrom(const Config& config);
BufferSettings BufferSettingsFrom(const Config& config);

}  // namespace numaprobe::daemon
