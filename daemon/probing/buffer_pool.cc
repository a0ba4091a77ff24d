#include "daemon/probing/buffer_pool.h"

#include <algorithm>
#include <optional>
#include <string>

namespace numaprobe::daemon {

using kernels::Expected;
using kernels::Failure;
using kernels::Outcome;

BufferPool::Entry* BufferPool::Find(Kind kind, int node) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->kind == kind && it->node == node) {
      entries_.splice(entries_.begin(), entries_, it);
      return &entries_.front();
    }
  }
  return nullptr;
}

std::size_t BufferPool::bytes_in_use() const {
  std::size_t total = 0;
  for (const auto& e : entries_) total += e.bytes;
  return total;
}

std::optional<Failure> BufferPool::MakeRoom(std::size_t bytes, int node) {
  if (settings_.budget_bytes == 0) return std::nullopt;
  if (bytes > settings_.budget_bytes) {
    return Failure{Outcome::kAllocFailed, "node " + std::to_string(node) + ": a " + std::to_string(bytes >> 20) +
                                              " MiB probe buffer exceeds the memory budget of " +
                                              std::to_string(settings_.budget_bytes >> 20) + " MiB"};
  }
  while (!entries_.empty() && bytes_in_use() + bytes > settings_.budget_bytes) entries_.pop_back();
  return std::nullopt;
}

Expected<kernels::LatencyBuffer*> BufferPool::Latency(int node, std::size_t llc_bytes) {
  if (Entry* hit = Find(Kind::kLatency, node)) return hit->latency.get();
  kernels::LatencyBufferSpec spec;
  spec.mem_node = node;
  spec.stride = settings_.stride;
  spec.llc_bytes = llc_bytes;
  spec.pages = settings_.pages;
  spec.loads_per_sample = settings_.loads_per_sample;
  spec.bytes = settings_.latency_bytes;  // 0: the flushed default
  if (auto failure = MakeRoom(spec.bytes, node)) return *failure;
  auto buffer = kernels::LatencyBuffer::Create(spec);
  if (!buffer.ok()) return buffer.failure();
  auto owned = std::make_unique<kernels::LatencyBuffer>(std::move(buffer).value());
  auto* raw = owned.get();
  entries_.push_front(Entry{Kind::kLatency, node, raw->info().bytes, std::move(owned), nullptr});
  return raw;
}

Expected<kernels::BandwidthBuffer*> BufferPool::Bandwidth(int node) {
  if (Entry* hit = Find(Kind::kBandwidth, node)) return hit->bandwidth.get();
  if (auto failure = MakeRoom(settings_.bandwidth_bytes, node)) return *failure;
  auto buffer = kernels::BandwidthBuffer::Create({node, settings_.bandwidth_bytes, settings_.pages});
  if (!buffer.ok()) return buffer.failure();
  auto owned = std::make_unique<kernels::BandwidthBuffer>(std::move(buffer).value());
  auto* raw = owned.get();
  entries_.push_front(Entry{Kind::kBandwidth, node, raw->info().bytes, nullptr, std::move(owned)});
  return raw;
}

void BufferPool::EndProbe() {
  if (!settings_.keep_between_probes) entries_.clear();
}

void BufferPool::Drop(Kind kind, int node) {
  entries_.remove_if([&](const Entry& e) { return e.kind == kind && e.node == node; });
}

}  // namespace numaprobe::daemon
