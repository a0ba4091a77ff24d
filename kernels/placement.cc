// SPDX-License-Identifier: Apache-2.0
#include "kernels/placement.h"

#include <numaif.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/prng.h"

namespace numaprobe::kernels {
namespace {

// Pages per move_pages call: bounds the status arrays without paying one
// syscall per page on a 1 GiB arena of 4 KiB pages (262144 pages).
constexpr std::size_t kBatchPages = 4096;

// Raw syscalls, not libnuma's wrappers: numaif.h supplies only the constants,
// and a refusal comes back as an errno we act on rather than a printed message.
long MovePagesQuery(std::size_t count, const void** pages, int* status) {
  return syscall(SYS_move_pages, 0L, static_cast<unsigned long>(count), pages, nullptr, status, 0L);
}

// Node of the page containing `addr`, or -errno.
int GetMempolicyNode(const void* addr) {
  int node = -1;
  const long rc =
      syscall(SYS_get_mempolicy, &node, nullptr, 0UL, addr, static_cast<unsigned long>(MPOL_F_NODE | MPOL_F_ADDR));
  return rc == 0 ? node : -errno;
}

bool IsRefusal(int err) { return err == EPERM || err == ENOSYS; }

void Record(PlacementReport& report, std::size_t offset, int status) {
  ++report.pages_checked;
  if (status < 0) {
    ++report.pages_unknown;
  } else if (status != report.expected_node) {
    if (report.pages_misplaced == 0) {
      report.observed_node = status;
      report.misplaced_offset = offset;
    }
    ++report.pages_misplaced;
  }
}

// Asks where the pages at `offsets` from `base` live (`status`: a node, or
// -errno), switching `method` to the next mechanism when the current one is
// refused outright (seccomp).
void QueryBatch(const std::byte* base, const std::vector<std::size_t>& offsets, std::string& method,
                std::vector<int>& status) {
  std::vector<const void*> pages(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) pages[i] = base + offsets[i];
  status.assign(offsets.size(), -ENOENT);

  if (method == "move_pages") {
    if (MovePagesQuery(pages.size(), pages.data(), status.data()) >= 0) return;
    const int err = errno;
    if (!IsRefusal(err)) {
      std::fill(status.begin(), status.end(), -err);
      return;
    }
    method = "get_mempolicy";
  }
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    if (method == "get_mempolicy") {
      status[i] = GetMempolicyNode(pages[i]);
      if (IsRefusal(-status[i])) method = "none";
    }
  }
}

void CheckBatch(const std::byte* base, const std::vector<std::size_t>& offsets, PlacementReport& report) {
  std::vector<int> status;
  QueryBatch(base, offsets, report.method, status);
  for (std::size_t i = 0; i < offsets.size(); ++i) Record(report, offsets[i], status[i]);
}

}  // namespace

PlacementReport VerifyPlacement(const void* addr, std::size_t bytes, std::size_t page_bytes, int expected_node,
                                std::size_t max_pages, std::uint64_t seed) {
  PlacementReport report;
  report.expected_node = expected_node;
  report.method = "move_pages";
  if (addr == nullptr || bytes == 0 || page_bytes == 0) return report;

  const auto* base = static_cast<const std::byte*>(addr);
  const std::size_t total = (bytes + page_bytes - 1) / page_bytes;
  const bool sampled = max_pages != 0 && max_pages < total;
  const std::size_t count = sampled ? max_pages : total;
  SplitMix64 rng(seed);

  std::vector<std::size_t> offsets;
  offsets.reserve(std::min(count, kBatchPages));
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t page = sampled ? static_cast<std::size_t>(rng.Below(total)) : i;
    offsets.push_back(page * page_bytes);
    if (offsets.size() == kBatchPages || i + 1 == count) {
      CheckBatch(base, offsets, report);
      offsets.clear();
    }
  }
  return report;
}

std::vector<int> PageNodes(const void* addr, std::size_t bytes, std::size_t page_bytes, std::string& method) {
  method = "move_pages";
  std::vector<int> nodes;
  if (addr == nullptr || page_bytes == 0) return nodes;
  const auto* base = static_cast<const std::byte*>(addr);
  const std::size_t total = (bytes + page_bytes - 1) / page_bytes;
  nodes.reserve(total);
  std::vector<std::size_t> offsets;
  std::vector<int> status;
  for (std::size_t first = 0; first < total; first += kBatchPages) {
    offsets.clear();
    for (std::size_t page = first; page < std::min(total, first + kBatchPages); ++page) {
      offsets.push_back(page * page_bytes);
    }
    QueryBatch(base, offsets, method, status);
    nodes.insert(nodes.end(), status.begin(), status.end());
  }
  return nodes;
}

Failure PlacementFailure(const PlacementReport& report) {
  if (!report.split_mismatch.empty()) return {Outcome::kPlacementMismatch, report.split_mismatch};
  const std::string node = std::to_string(report.expected_node);
  const std::string of_pages = " of " + std::to_string(report.pages_checked) + " pages";
  if (report.pages_misplaced > 0) {
    return {Outcome::kPlacementMismatch, "node " + node + " requested, page at offset " +
                                             std::to_string(report.misplaced_offset) + " is on node " +
                                             std::to_string(report.observed_node) + " (" +
                                             std::to_string(report.pages_misplaced) + of_pages + " misplaced)"};
  }
  if (report.pages_checked == 0) {
    return {Outcome::kPlacementUnverified, "node " + node + ": placement unverified: no pages checked"};
  }
  return {Outcome::kPlacementUnverified, "node " + node +
                                             ": placement unverified: " + std::to_string(report.pages_unknown) +
                                             of_pages + " not present or not reported (" + report.method + ")"};
}

}  // namespace numaprobe::kernels
