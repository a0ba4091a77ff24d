#include "daemon/probing/buffer_pool.h"

#include <spdlog/spdlog.h>

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
    return Failure{Outcome::kAllocFailed,
                   "node " + std::to_string(node) + ": a " + std::to_string(bytes >> 20) +
                       " MiB probe buffer exceeds the memory budget of " +
                       std::to_string(settings_.budget_bytes >> 20) + " MiB"};
  }
  while (!entries_.empty() && bytes_in_use() + bytes > settings_.budget_bytes) entries_.pop_back();
  return std::nullopt;
}

std::size_t BufferPool::AutomaticLatencyBytes(int node, std::size_t llc_bytes) {
  const std::size_t wanted = kernels::DefaultLatencyBufferBytes(llc_bytes, settings_.stride);
  if (settings_.budget_bytes == 0) return wanted;
  // A CPU with a huge LLC (100+ MiB per socket) would want a chase buffer as
  // large as the whole budget: then every round would evict and rebuild the
  // node's buffers, or the probe would fail outright. Measure what fits instead,
  // and say that some loads may now hit the LLC.
  const std::size_t reserved = settings_.bandwidth_enabled ? settings_.bandwidth_bytes : 0;
  const std::size_t room = settings_.budget_bytes > reserved ? settings_.budget_bytes - reserved : 0;
  const std::size_t cap = kernels::DefaultLatencyBufferBytes(llc_bytes, settings_.stride, room);
  if (wanted <= cap) return wanted;
  if (warned_nodes_.insert(node).second) {
    const std::size_t footprint = cap * 64 / std::max<std::size_t>(settings_.stride, 64);
    spdlog::warn(
        "node {}: the latency buffer is capped at {} MiB by memory.budget (wanted {} MiB): its {} MiB footprint is "
        "{:.1f}x the {} MiB LLC, so some loads may hit the cache and the latency reads low; raise memory.budget by "
        "{} MiB to measure DRAM alone",
        node, cap >> 20, wanted >> 20, footprint >> 20, static_cast<double>(footprint) / static_cast<double>(llc_bytes),
        llc_bytes >> 20, (wanted - cap) >> 20);
  }
  return cap;
}

Expected<kernels::LatencyBuffer*> BufferPool::Latency(int node, std::size_t llc_bytes) {
  if (Entry* hit = Find(Kind::kLatency, node)) return hit->latency.get();
  kernels::LatencyBufferSpec spec;
  spec.mem_node = node;
  spec.stride = settings_.stride;
  spec.llc_bytes = llc_bytes;
  spec.pages = settings_.pages;
  spec.bytes = settings_.latency_bytes != 0 ? settings_.latency_bytes : AutomaticLatencyBytes(node, llc_bytes);
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

void BufferPool::Drop(Kind kind, int node) {
  entries_.remove_if([&](const Entry& e) { return e.kind == kind && e.node == node; });
}

}  // namespace numaprobe::daemon
