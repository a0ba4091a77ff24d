// SPDX-License-Identifier: Apache-2.0
// A probe buffer bound to one NUMA node, pre-faulted by writing, and verified
// page by page before anyone measures it.
//
// Binding is done with mbind(MPOL_BIND, MPOL_MF_STRICT) directly, not through
// libnuma, whose numa_alloc_onnode() prints and falls back to local memory when
// mbind is refused (seccomp): that would publish a local figure as "remote".
// Page size ladder for PagePolicy::kAuto: hugetlb of 2 MiB or more (needs a
// per-node pool), THP via madvise (confirmed afterwards, never by writing
// sysfs), base pages. Every size is the host's (kernels/page_sizes.h): 4 KiB
// and 2 MiB on x86-64, 16 or 64 KiB base pages on some arm64 kernels.
//
// Thread safety: an Arena is owned by one thread at a time; move-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "kernels/page_sizes.h"
#include "kernels/result.h"

namespace numaprobe::kernels {

struct ArenaSpec {
  std::size_t bytes = 0;  // rounded up to the page size obtained
  int node = -1;          // NUMA node the memory must live on
  PagePolicy pages = PagePolicy::kAuto;
  const PageSizes* page_sizes = nullptr;  // nullptr: this host's (HostPageSizes)
  // Non-empty: node -> weight (1..255). The memory is spread over these nodes
  // by MPOL_WEIGHTED_INTERLEAVE instead of bound to `node`, and verified by
  // the split the weights give (kernels/weighted_interleave.h): info().node
  // is -1 and info().placement holds each node's share. No hugetlb: its pool
  // is per node.
  std::map<int, int> weighted_interleave = {};
};

class Arena {
 public:
  // Allocates, binds, pre-faults by writing and verifies every page with
  // move_pages(2). Fails with kBindFailed, kAllocFailed, kPlacementMismatch or
  // kPlacementUnverified and a reason naming the node.
  static Expected<Arena> Create(const ArenaSpec& spec);

  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  std::byte* data() const { return data_; }
  std::size_t bytes() const { return info_.bytes; }
  int node() const { return info_.node; }
  std::size_t page_bytes() const { return info_.page_bytes; }
  const BufferInfo& info() const { return info_; }

  // Re-checks `pages` pages chosen at random (0 = all): the kernel can move
  // pages after the fact (NUMA balancing, demotion). Updates info().placement.
  // A weighted-interleave arena checks its whole split again: a split is a
  // count over the buffer, which a sample cannot confirm.
  const PlacementReport& Reverify(std::size_t pages, std::uint64_t seed);

 private:
  Arena(std::byte* data, std::size_t mapped_bytes, BufferInfo info);
  void Release();
  // Where the pages of a weighted-interleave arena are, against its weights.
  PlacementReport CheckSplit() const;

  std::byte* data_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  BufferInfo info_;
  std::map<int, int> weights_;  // ArenaSpec::weighted_interleave
  std::size_t base_page_ = 0;
  std::size_t thp_page_ = 0;
};

}  // namespace numaprobe::kernels
