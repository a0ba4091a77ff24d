// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/kinds/memory_buffers.h"

#include <fmt/format.h>

namespace numaprobe::daemon {

namespace k = kernels;

namespace {
constexpr const char* kChase = "chase";
constexpr const char* kStream = "stream";
constexpr const char* kPeakStream = "peak_stream";
}  // namespace

k::Expected<k::LatencyBuffer*> ChaseBuffer(ProbeRunner& runner, int node, std::size_t llc_bytes) {
  const LatencySettings& s = runner.settings().Of<LatencySettings>();
  k::LatencyBufferSpec spec;
  spec.mem_node = node;
  spec.stride = s.stride;
  spec.llc_bytes = llc_bytes;
  spec.pages = runner.pool().settings().pages;
  spec.loads_per_sample = s.spec.loads_per_sample;
  spec.bytes = s.buffer_bytes;  // 0: the flushed default
  // The LLC size is not part of the recipe: the flushed buffer does not grow with it.
  const std::string recipe = fmt::format("stride={};loads={};bytes={}", spec.stride, spec.loads_per_sample, spec.bytes);
  return runner.pool().Get<k::LatencyBuffer>(kChase, node, recipe, spec.bytes,
                                             [&] { return k::LatencyBuffer::Create(spec); });
}

k::Expected<k::BandwidthBuffer*> StreamBuffer(ProbeRunner& runner, int node) {
  const std::size_t bytes = runner.settings().Of<BandwidthSettings>().buffer_bytes;
  const k::PagePolicy pages = runner.pool().settings().pages;
  return runner.pool().Get<k::BandwidthBuffer>(kStream, node, fmt::format("bytes={}", bytes), bytes, [&] {
    return k::BandwidthBuffer::Create({node, bytes, pages});
  });
}

k::Expected<k::BandwidthBuffer*> PeakStreamBuffer(ProbeRunner& runner, int node, std::size_t bytes) {
  const k::PagePolicy pages = runner.pool().settings().pages;
  return runner.pool().Get<k::BandwidthBuffer>(kPeakStream, node, fmt::format("bytes={}", bytes), bytes, [&] {
    return k::BandwidthBuffer::Create({node, bytes, pages});
  });
}

void DropChaseBuffer(ProbeRunner& runner, int node) { runner.pool().Drop(kChase, node); }
void DropStreamBuffer(ProbeRunner& runner, int node) { runner.pool().Drop(kStream, node); }
void DropPeakStreamBuffer(ProbeRunner& runner, int node) { runner.pool().Drop(kPeakStream, node); }

}  // namespace numaprobe::daemon
