// Per-kind knobs of a probe run, and the settings a Config implies, shared by
// the daemon and by `numaprobe probe`'s defaults, so the CLI and the daemon
// measure the same way. The cpu/pair fields of the kernel specs are filled
// per run by each kind.
#pragma once

#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/buffer_pool.h"
#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"

namespace numaprobe::daemon {

struct ProbeSettings {
  kernels::LatencyRunSpec latency;
  kernels::BandwidthRunSpec bandwidth;
  int bandwidth_threads = 1;  // >1: the pair's CPU plus further CPUs of its node
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
  kernels::C2cSpec c2c;
};

ProbeSettings ProbeSettingsFrom(const Config& config);
BufferSettings BufferSettingsFrom(const Config& config);

}  // namespace numaprobe::daemon
