// SPDX-License-Identifier: Apache-2.0
// Each kind's own settings types: its config section probes.<kind>, as
// Config::probes.Of<T>() holds it (read by the kind's ReadConfig), and its run
// settings, as ProbeSettings::Of<T>() holds them: the kernel spec plus the
// kind's own knobs, filled from the section (ProbeKind::AddSettings) or
// `numaprobe probe`'s flags (RegisterFlags). The cpu/pair fields of the
// kernel specs are filled per run by each kind. In one header because the
// memory buffers and core-to-core's shared --samples read another kind's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"
#include "kernels/loaded_latency.h"

namespace numaprobe::daemon {

// Accepted samples per pair, at most, for every kind that takes samples:
// latency's --samples also sets core-to-core's (CoreToCoreKind::AfterFlags),
// so their keys share one range. Each kernel gives a run a fixed time (a
// latency run 2 s, a loaded-latency point 1 s): 100 samples of the default
// loads fit it even at remote latencies of 400 ns; many more never could.
inline constexpr std::int64_t kMaxSamplesPerPair = 100;

// The config sections; the defaults are config/numaprobe.yaml's.
struct LatencyConfig {
  bool enabled = true;
  std::size_t stride_bytes = 128;
  std::size_t buffer_bytes = 0;  // 0: sized from the LLC of the measuring CPU
  int samples = 7;
  std::uint64_t loads_per_sample = 40'000;
  bool operator==(const LatencyConfig&) const = default;
};

struct BandwidthConfig {
  bool enabled = true;
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
  int threads = 1;
  std::size_t buffer_bytes = 256u << 20;
  std::size_t burst_bytes = 32u << 20;
  int bursts = 5;
  bool operator==(const BandwidthConfig&) const = default;
};

struct CoreToCoreConfig {
  bool enabled = true;
  int samples = 7;
  int round_trips = 2000;
  int run_timeout_ms = 1000;  // kernels::C2cSpec::total_timeout
  bool operator==(const CoreToCoreConfig&) const = default;
};

// Loaded latency (MLC --loaded_latency): on demand by default, since one
// run of a pair costs about a second of CPU on every CPU of the node (see
// config/numaprobe.yaml before enabling it in the daemon).
struct LoadedLatencyConfig {
  bool enabled = false;
  std::vector<std::string> traffic{"read", "read2-ntwrite1"};  // kernels::LoadTrafficName
  int load_threads = 0;                                        // 0: every other allowed CPU of the chase CPU's node
  int samples = 5;
  std::uint64_t loads_per_sample = 10'000;
  bool operator==(const LoadedLatencyConfig&) const = default;
};

// Peak bandwidth in the daemon: off by default, since a run loads every CPU
// of a node and its memory for its whole length; when on, it runs on a
// schedule of its own in hours (ProbeKind::OwnScheduleOf), on idle nodes only,
// within a CPU budget of its own (config/numaprobe.yaml says what each costs).
struct PeakBandwidthConfig {
  bool enabled = false;
  std::chrono::milliseconds interval{std::chrono::hours(6)};  // between two runs of a target
  double duty_cycle = 0.01;               // its CPU budget, a share of one CPU, apart from schedule.duty_cycle
  double max_busy = 0.10;                 // the idle gate: the node's CPUs busy at most this share over kPeakGateWindow
  int threads = 0;                        // 0: every usable CPU of the node
  std::size_t buffer_bytes = 256u << 20;  // at least (PeakBandwidthSettings)
  std::size_t burst_bytes = std::size_t{64} << 20;  // PeakBandwidthSettings::spec
  int bursts = 5;
  bool operator==(const PeakBandwidthConfig&) const = default;
};

// The run settings.

struct LatencySettings {
  kernels::LatencyRunSpec spec;
  std::size_t buffer_bytes = 0;  // 0: kernels::DefaultLatencyBufferBytes(loads_per_sample, stride)
  std::size_t stride = 128;
};

struct BandwidthSettings {
  kernels::BandwidthRunSpec spec;
  std::size_t buffer_bytes = 256u << 20;
  int threads = 1;  // >1: the pair's CPU plus further CPUs of its node
  // --threads as given, 0 when it is not: it sets `threads` here and the
  // peak bandwidth's count (whose default is every CPU, not one).
  int threads_flag = 0;
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
};

// Peak bandwidth (Intel MLC --bandwidth_matrix): every allowed CPU of the CPU
// node streams at once, so the figure is the memory system's (its channels,
// the link between sockets), not what one core can keep in flight.
struct PeakBandwidthSettings {
  // spec.burst_bytes is what all threads move together per burst (64 MiB:
  // ~0.2-2 ms at a node's 30-400 GB/s), shared among them, at least 1 MiB each
  // (PeakBurstPerThread): the burst lasts about as long however many CPUs a
  // node has, and the buffer of four bursts stays 256 MiB, inside the
  // daemon's default memory.budget, up to 64 CPUs.
  kernels::BandwidthRunSpec spec = [] {
    kernels::BandwidthRunSpec s;
    s.burst_bytes = std::size_t{64} << 20;
    return s;
  }();
  int threads = 0;                        // 0: every allowed CPU of cpu_node
  std::size_t buffer_bytes = 256u << 20;  // at least; grows to four bursts of every thread
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite};
  // The daemon measures each node's own memory and one remote node per
  // distance; `numaprobe probe` the whole matrix, as MLC prints it.
  bool whole_matrix = false;
  // The idle gate (PeakBandwidthConfig::max_busy); `numaprobe probe` measures
  // when asked (an operator at a terminal chose the moment): no gate.
  std::optional<double> max_busy;
  // The daemon with threads: 0 streams from as many CPUs as saturate the
  // node's memory, found once per series (kinds/peak_thread_search.h); a
  // terminal and a configured count stream from every CPU they name.
  bool search_threads = false;
};

struct CoreToCoreSettings {
  kernels::C2cSpec spec;
  int run_timeout_ms = 1000;  // --c2c-timeout-ms, copied to spec.total_timeout
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
