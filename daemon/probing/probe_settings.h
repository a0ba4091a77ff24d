// Per-kind knobs of a probe run, and the settings a Config implies, shared by
// the daemon and by `numaprobe probe`'s defaults, so the CLI and the daemon
// measure the same way. The cpu/pair fields of the kernel specs are filled
// per run by each kind.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/probe_kind.h"
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
  std::size_t latency_buffer_bytes = 0;  // 0: kernels::DefaultLatencyBufferBytes(loads_per_sample, stride)
  std::size_t stride = 128;
  std::size_t bandwidth_buffer_bytes = 256u << 20;
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
  // NUMAPROBE_TEST_MODE=1): kind name -> factor a kind that is TestScaled()
  // multiplies its figures by, so integration tests can raise a regression.
  std::map<std::string, double> test_scales;
  double TestScaleOf(std::string_view kind) const {
    const auto it = test_scales.find(std::string(kind));
    return it == test_scales.end() ? 1 : it->second;
  }
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
// How the published figures of `config` are labelled (probe_kind.h).
FigureContext FigureContextFrom(const Config& config);
BufferSettings BufferSettingsFrom(const Config& config);

}  // namespace numaprobe::daemon
