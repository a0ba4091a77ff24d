// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/kinds/peak_stream.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/probing/idle_gate.h"

namespace numaprobe::daemon {

namespace k = kernels;

std::size_t PeakBurstPerThread(std::size_t burst_bytes, std::size_t threads) {
  constexpr std::size_t kMinPerThread = std::size_t{1} << 20;
  return std::max(kMinPerThread, burst_bytes / std::max<std::size_t>(threads, 1) / 64 * 64);
}

std::size_t PeakBufferBytes(const PeakBandwidthSettings& settings, std::size_t threads) {
  return std::max(settings.buffer_bytes,
                  k::MinBandwidthBufferBytes(PeakBurstPerThread(settings.spec.burst_bytes, threads), threads));
}

std::optional<std::string> PeakGateClosed(ProbeRunner& runner, int cpu_node, const std::vector<int>& usable) {
  const PeakBandwidthSettings& settings = runner.settings().Of<PeakBandwidthSettings>();
  if (!settings.max_busy) return std::nullopt;
  const std::optional<std::string> closed =
      IdleGateClosed(runner.SampleBusy(kIdleGateWindow), usable, *settings.max_busy);
  if (!closed) return std::nullopt;
  return fmt::format("node {}: {} (probes.peak_bandwidth.max_busy)", cpu_node, *closed);
}

k::BandwidthResult MeasurePeakStream(ProbeRunner& runner, k::BandwidthBuffer& buffer, const std::vector<int>& cpus,
                                     std::size_t count, k::BandwidthOp op, double test_scale,
                                     const std::atomic<bool>* stop) {
  const PeakBandwidthSettings& settings = runner.settings().Of<PeakBandwidthSettings>();
  k::BandwidthRunSpec spec = settings.spec;
  spec.cpus.assign(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(count));
  spec.burst_bytes = PeakBurstPerThread(settings.spec.burst_bytes, count);
  spec.op = op;
  spec.stop = stop;
  k::BandwidthResult result = k::MeasureBandwidth(buffer, spec);
  ScaleForTest(result.bytes_per_second, test_scale);
  return result;
}

bool PeakStreamMayStart(ProbeRunner& runner, const ProbeLockHold& hold, const MemoryPair& pair,
                        const PeakBandwidthSettings& settings, kernels::BandwidthResult& result) {
  result.cpus = runner.ChooseCpus(pair, settings.threads > 0 ? settings.threads : 1 << 20);
  if (runner.Cancelled(hold, result)) return false;
  if (std::optional<std::string> closed = PeakGateClosed(runner, pair.cpu_node, result.cpus)) {
    result.outcome = kernels::Outcome::kSkipped;
    result.reason = std::move(*closed);
    return false;
  }
  return true;
}

}  // namespace numaprobe::daemon
