// Per-kind knobs of a probe run, and the settings a Config implies, shared by
// the daemon and by `numaprobe probe`'s defaults, so the CLI and the daemon
// measure the same way. The cpu/pair fields of the kernel specs are filled
// per run by each kind.
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/buffer_pool.h"
#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"
#include "kernels/loaded_latency.h"

namespace numaprobe::daemon {

// The kernel's default injection delays, as the flag's integer list.
inline std::vector<int> DefaultDelays() {
  std::vector<int> delays;
  for (std::uint32_t d : kernels::DefaultInjectionDelaysNs()) delays.push_back(static_cast<int>(d));
  return delays;
}

struct ProbeSettings {
  kernels::LatencyRunSpec latency;
  kernels::BandwidthRunSpec bandwidth;
  int bandwidth_threads = 1;  // >1: the pair's CPU plus further CPUs of its node
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
  kernels::C2cSpec c2c;
  kernels::LoadedLatencySpec loaded_latency;  // samples, loads; CPUs, traffic and delays per run
  std::vector<int> loaded_delays_ns = DefaultDelays();
  std::vector<std::string> loaded_traffic{"read", "read2-ntwrite1"};
  int loaded_load_threads = 0;  // 0: every other allowed CPU of the chase CPU's node
  // Test-only fault injection (daemon/common/test_hooks.h, honoured only with
  // NUMAPROBE_TEST_MODE=1): the latency and bandwidth kinds multiply their
  // figures by these, so integration tests can raise a regression.
  double test_latency_scale = 1;
  double test_bandwidth_scale = 1;
};

// Multiplies every statistic of `stats` by `factor` (test fault injection).
inline void ScaleForTest(kernels::SampleStats& stats, double factor) {
  if (factor == 1) return;
  stats.median *= factor;
  stats.min *= factor;
  stats.max *= factor;
  stats.mad *= factor;
}

ProbeSettings ProbeSettingsFrom(const Config& config);
BufferSettings BufferSettingsFrom(const Config& config);

}  // namespace numaprobe::daemon
