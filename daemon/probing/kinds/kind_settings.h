// Each kind's run settings, as ProbeSettings::Of<T>() holds them: the kernel
// spec plus the kind's own knobs, filled from the kind's config section
// (ProbeKind::AddSettings) or `numaprobe probe`'s flags (RegisterFlags). The
// cpu/pair fields of the kernel specs are filled per run by each kind. In one
// header because the memory buffers and core-to-core's shared --samples read
// another kind's settings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"
#include "kernels/loaded_latency.h"

namespace numaprobe::daemon {

struct LatencySettings {
  kernels::LatencyRunSpec spec;
  std::size_t buffer_bytes = 0;  // 0: kernels::DefaultLatencyBufferBytes(loads_per_sample, stride)
  std::size_t stride = 128;
};

struct BandwidthSettings {
  kernels::BandwidthRunSpec spec;
  std::size_t buffer_bytes = 256u << 20;
  int threads = 1;  // >1: the pair's CPU plus further CPUs of its node
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
};

struct CoreToCoreSettings {
  kernels::C2cSpec spec;
};

// The kernel's default injection delays, as the flag's integer list.
inline std::vector<int> DefaultDelays() {
  std::vector<int> delays;
  for (std::uint32_t d : kernels::DefaultInjectionDelaysNs()) delays.push_back(static_cast<int>(d));
  return delays;
}

struct LoadedLatencySettings {
  kernels::LoadedLatencySpec spec;  // samples, loads; CPUs, traffic and delays per run
  std::vector<int> delays_ns = DefaultDelays();
  std::vector<std::string> traffic{"read", "read2-ntwrite1"};
  int load_threads = 0;  // 0: every other allowed CPU of the chase CPU's node
};

}  // namespace numaprobe::daemon
