// SPDX-License-Identifier: Apache-2.0
// The page sizes of the running kernel, read from the host instead of assumed.
// x86-64 has 4 KiB base pages and 2 MiB PMD (THP) pages, but arm64 kernels are
// also built with 16 KiB or 64 KiB base pages (RHEL's and Ubuntu's "64k"
// kernels on Grace, Ampere and Graviton fleets), whose PMD is then 32 MiB or
// 512 MiB, with hugetlb sizes that include contiguous-PTE ones (2 MiB).
// Buffers are touched every base page, windows are sized in base pages, and
// the page size a buffer got is reported, from these figures.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace numaprobe::kernels {

// The largest TLB-local window of the chase and the smallest hugetlb page
// worth asking for: one x86-64 PMD page, 2 MiB.
inline constexpr std::size_t kHugeWindowBytes = std::size_t{2} << 20;

struct HugetlbSize {
  std::size_t bytes = 0;
  std::size_t reserved_pages = 0;  // nr_hugepages: the persistent pool over all nodes
  bool operator==(const HugetlbSize&) const = default;
};

struct PageSizes {
  std::size_t base = 0;              // sysconf(_SC_PAGESIZE)
  std::size_t thp = 0;               // the PMD size THP comes in; 0: a kernel without THP
  std::vector<HugetlbSize> hugetlb;  // ascending; empty: no hugetlb support
  std::string sysfs_root;            // where the per-node pools are read
};

// Reads <sysfs_root>/kernel/mm/transparent_hugepage/hpage_pmd_size and the
// <sysfs_root>/kernel/mm/hugepages/hugepages-<N>kB directories. A missing file
// or directory means the kernel lacks the feature (thp 0, no hugetlb sizes); a
// base page that is not a power of two of at least 4 KiB, or a file that is
// there but does not hold a size, fails with kInvalidSpec naming it.
Expected<PageSizes> ReadPageSizes(const std::string& sysfs_root, std::size_t base_page);

// This host's (sysconf and /sys), read once.
const Expected<PageSizes>& HostPageSizes();

// <sysfs_root>/devices/system/node/node<N>/hugepages/hugepages-<kB>kB/<file>
std::string HugetlbPoolPath(const PageSizes& sizes, int node, std::size_t page_bytes, std::string_view file);
// Free pages in that pool; 0 when it does not exist.
std::size_t FreeHugetlbPages(const PageSizes& sizes, int node, std::size_t page_bytes);

// The hugetlb sizes worth asking for a buffer of `bytes`, smallest first: at
// least 2 MiB (smaller ones are contiguous base pages that cost the same TLB
// entries on most parts) and no larger than the buffer, unless 2 MiB is
// (so a 16 MiB buffer never takes a 512 MiB page).
std::vector<std::size_t> HugetlbCandidates(const PageSizes& sizes, std::size_t bytes);

// Whether a buffer of `bytes` asks for THP: only when one PMD page is no
// larger than the buffer, or than 2 MiB, so that a 16 MiB buffer on a 64 KiB
// kernel is not rounded up to a 512 MiB page.
bool ThpFits(const PageSizes& sizes, std::size_t bytes);

// mmap flags for a hugetlb page of `page_bytes` (a power of two):
// MAP_HUGETLB | log2(page_bytes) << MAP_HUGE_SHIFT.
int HugetlbMmapFlags(std::size_t page_bytes);

// The chase's TLB-local window for pages of `page_bytes` of `kind`: 64 base
// pages, or one huge page, at most 2 MiB (docs/measurement.md, "Page sizes").
std::size_t TlbLocalWindow(PageKind kind, std::size_t page_bytes);

// "4KiB", "64KiB", "2MiB", "16GiB": a power-of-two size in its largest unit.
std::string PageSizeText(std::size_t bytes);

// "base 64KiB, THP 512MiB, hugetlb 2MiB (8 reserved), 512MiB (2 reserved)", for logs.
std::string DescribePageSizes(const PageSizes& sizes);

}  // namespace numaprobe::kernels
