// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/buffer_pool.h"

#include <string>

namespace numaprobe::daemon {

using kernels::Failure;
using kernels::Outcome;

BufferPool::Held* BufferPool::Find(std::string_view name, int node, const std::string& recipe) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->name != name || it->node != node) continue;
    if (it->recipe != recipe) {
      entries_.erase(it);
      return nullptr;
    }
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().held.get();
  }
  return nullptr;
}

std::size_t BufferPool::bytes_in_use() const {
  std::size_t total = 0;
  for (const auto& e : entries_) total += e.held->bytes();
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

void BufferPool::EndProbe() {
  if (!settings_.keep_between_probes) entries_.clear();
}

void BufferPool::Drop(std::string_view name, int node) {
  entries_.remove_if([&](const Entry& e) { return e.name == name && e.node == node; });
}

}  // namespace numaprobe::daemon
