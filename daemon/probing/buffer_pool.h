// Prepared probe buffers, one per (kind, memory node), kept between probes.
//
// Preparing a buffer (allocate, bind, fault in by writing, verify placement,
// link the chase) costs far more CPU than measuring it, so the daemon keeps
// them, within a byte budget: a buffer that does not fit evicts the least
// recently used ones. A buffer whose pages were found on the wrong node is
// dropped (Drop) so the next probe builds a fresh one.
//
// Thread safety: not thread-safe; owned by the one thread that runs probes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <set>
#include <memory>
#include <optional>

#include "kernels/bandwidth.h"
#include "kernels/latency.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct BufferSettings {
  std::size_t latency_bytes = 0;  // 0: sized from the measuring CPU's LLC
  std::size_t stride = 128;
  std::size_t bandwidth_bytes = 256u << 20;
  kernels::PagePolicy pages = kernels::PagePolicy::kAuto;
  std::size_t budget_bytes = 0;  // 0: unlimited
  // Bandwidth buffers are part of the plan: an automatically sized latency
  // buffer leaves room in the budget for its node's bandwidth buffer.
  bool bandwidth_enabled = true;
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
  // The LLC-derived latency buffer size, capped to what the budget leaves
  // (logged once per node when the cap bites).
  std::size_t AutomaticLatencyBytes(int node, std::size_t llc_bytes);

  BufferSettings settings_;
  std::list<Entry> entries_;  // most recently used first
  std::set<int> warned_nodes_;
};

}  // namespace numaprobe::daemon
