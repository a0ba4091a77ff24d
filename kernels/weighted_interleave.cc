// SPDX-License-Identifier: Apache-2.0
#include "kernels/weighted_interleave.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/page_sizes.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kMaskWordBits = 64;

// Appends a unit of `unit_bytes` on `node` to the last run, or starts a run
// when the unit size changes (huge and base units are indexed apart).
void AddUnit(std::vector<UnitRun>& runs, std::size_t unit_bytes, int node) {
  if (runs.empty() || runs.back().unit_bytes != unit_bytes) runs.push_back(UnitRun{unit_bytes, {}});
  ++runs.back().units[node < 0 ? -1 : node];
}

std::string Percent(double share) { return std::to_string(static_cast<int>(share * 1000 + 0.5) / 10) + "%"; }

}  // namespace

std::size_t UnitRun::total() const {
  std::size_t n = 0;
  for (const auto& [node, count] : units) n += count;
  return n;
}

std::vector<UnitRun> GroupUnits(const std::vector<int>& page_nodes, std::size_t base_bytes,
                                std::size_t pages_per_huge) {
  std::vector<UnitRun> runs;
  const std::size_t n = page_nodes.size();
  std::size_t i = 0;
  while (i < n) {
    if (pages_per_huge > 1 && i % pages_per_huge == 0 && i + pages_per_huge <= n) {
      const auto first = page_nodes.begin() + static_cast<std::ptrdiff_t>(i);
      const auto last = first + static_cast<std::ptrdiff_t>(pages_per_huge);
      if (*first >= 0 && std::all_of(first, last, [&](int node) { return node == *first; })) {
        AddUnit(runs, base_bytes * pages_per_huge, *first);
        i += pages_per_huge;
        continue;
      }
    }
    AddUnit(runs, base_bytes, page_nodes[i]);
    ++i;
  }
  return runs;
}

PlacementReport CheckSplit(const std::vector<UnitRun>& runs, const std::map<int, int>& weights) {
  PlacementReport report;
  report.method = "move_pages";
  std::size_t cycle = 0;
  for (const auto& [node, weight] : weights) cycle += static_cast<std::size_t>(weight);
  std::map<int, double> bytes_on;
  double total_bytes = 0;
  for (const UnitRun& run : runs) {
    const std::size_t n = run.total();
    report.pages_checked += n;
    total_bytes += static_cast<double>(n * run.unit_bytes);
    for (const auto& [node, count] : run.units) {
      if (node < 0) {
        report.pages_unknown += count;
        continue;
      }
      bytes_on[node] += static_cast<double>(count * run.unit_bytes);
      const auto weight = weights.find(node);
      if (weight == weights.end() || cycle == 0) {
        report.pages_misplaced += count;
        if (report.split_mismatch.empty()) {
          report.observed_node = node;
          report.split_mismatch = "weighted interleave: " + std::to_string(count) + " " + PageSizeText(run.unit_bytes) +
                                  " units on node " + std::to_string(node) +
                                  ", which is not among the interleaved nodes";
        }
      }
    }
    // Every weighted node, also one that got no unit: it must hold its share.
    // (No weights at all: every unit above was already beyond its node's.)
    if (cycle == 0) continue;
    for (const auto& [node, weight] : weights) {
      const auto w = static_cast<std::size_t>(weight);
      const std::size_t low = n / cycle * w;
      const std::size_t high = low + std::min(w, n % cycle);
      const auto it = run.units.find(node);
      const std::size_t count = it == run.units.end() ? 0 : it->second;
      if (count >= low && count <= high) continue;
      report.pages_misplaced += count > high ? count - high : low - count;
      if (report.split_mismatch.empty()) {
        report.observed_node = node;
        report.split_mismatch = "weighted interleave: node " + std::to_string(node) + " holds " +
                                std::to_string(count) + " of " + std::to_string(n) + " " +
                                PageSizeText(run.unit_bytes) + " units, its weight " + std::to_string(weight) + " of " +
                                std::to_string(cycle) + " gives " + std::to_string(low) +
                                (high > low ? " to " + std::to_string(high) : "") + " (" +
                                Percent(static_cast<double>(w) / static_cast<double>(cycle)) + ")";
      }
    }
  }
  if (total_bytes > 0) {
    for (const auto& [node, bytes] : bytes_on) report.node_shares[node] = bytes / total_bytes;
  }
  return report;
}

std::vector<unsigned long> NodeMask(const std::vector<int>& nodes, unsigned long& maxnode) {
  int highest = 0;
  for (const int node : nodes) highest = std::max(highest, node);
  std::vector<unsigned long> mask(static_cast<std::size_t>(highest) / kMaskWordBits + 1, 0);
  for (const int node : nodes) {
    mask[static_cast<std::size_t>(node) / kMaskWordBits] |= 1UL << (static_cast<std::size_t>(node) % kMaskWordBits);
  }
  // The kernel reads maxnode - 1 bits (a historical off-by-one libnuma also pays).
  maxnode = mask.size() * kMaskWordBits + 1;
  return mask;
}

std::string WeightedInterleaveRefusal(const std::vector<int>& nodes) {
  const long page = sysconf(_SC_PAGESIZE);
  const auto bytes = static_cast<std::size_t>(page > 0 ? page : 4096);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return std::string("mmap: ") + std::strerror(errno);
  unsigned long maxnode = 0;
  const std::vector<unsigned long> mask = NodeMask(nodes, maxnode);
  const long rc =
      syscall(SYS_mbind, p, bytes, static_cast<unsigned long>(kMpolWeightedInterleave), mask.data(), maxnode, 0UL);
  const int err = errno;
  munmap(p, bytes);
  return rc == 0 ? "" : std::string("mbind(MPOL_WEIGHTED_INTERLEAVE): ") + std::strerror(err);
}

}  // namespace numaprobe::kernels
