// Prepared probe buffers, one per (kind, memory node).
//
// The daemon frees them after every visit (EndProbe; a visit is the probes
// that share buffers, run back to back: scheduler.h): resident memory between
// probes is then the process alone (tens of MiB), like any exporter, instead
// of every node's buffers (hundreds of MiB on every host of a fleet). The
// price is preparing a buffer (allocate, bind, fault in, verify placement,
// link the chase) for each probe, which the duty-cycle budget charges like
// the measurement; the latency buffer is small for that reason (flushed, not
// sized past the LLC: kernels/latency.h). `numaprobe probe`, a one-off, keeps
// them for the whole run (keep_between_probes). Within a probe the buffers
// stay inside a byte budget. A buffer whose pages were found on the wrong
// node is dropped (Drop) so the next probe builds a fresh one.
//
// Thread safety: not thread-safe; owned by the one thread that runs probes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>

#include "kernels/bandwidth.h"
#include "kernels/latency.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct BufferSettings {
  std::size_t latency_bytes = 0;  // 0: kernels::DefaultLatencyBufferBytes(loads_per_sample, stride)
  std::uint64_t loads_per_sample = 40'000;
  std::size_t stride = 128;
  std::size_t bandwidth_bytes = 256u << 20;
  kernels::PagePolicy pages = kernels::PagePolicy::kAuto;
  std::size_t budget_bytes = 0;  // 0: unlimited
  bool keep_between_probes = false;
  bool operator==(const BufferSettings&) const = default;
};

class BufferPool {
 public:
  explicit BufferPool(BufferSettings settings) : settings_(settings) {}

  // Returns the prepared buffer for `node`, building it on first use.
  kernels::Expected<kernels::LatencyBuffer*> Latency(int node, std::size_t llc_bytes);
  kernels::Expected<kernels::BandwidthBuffer*> Bandwidth(int node);

  enum class Kind { kLatency, kBandwidth };
  void Drop(Kind kind, int node);
  // Frees every buffer unless keep_between_probes (the daemon calls it
  // after each visit, see ProbeRunner::ReleaseBuffers).
  void EndProbe();
  std::size_t bytes_in_use() const;
  const BufferSettings& settings() const { return settings_; }

 private:
  struct Entry {
    Kind kind;
    int node;
    std::size_t bytes;
    std::unique_ptr<kernels::LatencyBuffer> latency;
    std::unique_ptr<kernels::BandwidthBuffer> bandwidth;
  };
  Entry* Find(Kind kind, int node);  // moves a hit to the front (most recent)
  // Evicts least recently used entries until `bytes` more fit in the budget.
  std::optional<kernels::Failure> MakeRoom(std::size_t bytes, int node);
  BufferSettings settings_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace numaprobe::daemon
