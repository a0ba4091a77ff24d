// SPDX-License-Identifier: Apache-2.0
#include "kernels/arena.h"

#include <linux/mman.h>
#include <numaif.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/placement.h"
#include "kernels/weighted_interleave.h"

namespace numaprobe::kernels {
namespace {

// mbind rejects node masks longer than one page of bits.
constexpr int kMaxNodeId = 4096 * 8 - 2;

std::size_t RoundUp(std::size_t x, std::size_t align) { return (x + align - 1) / align * align; }

Failure NodeFailure(Outcome outcome, int node, const std::string& what) {
  return {outcome, "node " + std::to_string(node) + ": " + what};
}

std::string SyscallError(std::string_view call, int err) { return std::string(call) + ": " + std::strerror(err); }

// A mapping not yet bound or faulted in, and the size of the pages asked for.
struct Mapping {
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::size_t page_bytes = 0;
};

Expected<Mapping> MapAnonymous(std::size_t bytes, int node, std::size_t page_bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NodeFailure(Outcome::kAllocFailed, node, SyscallError("mmap", errno));
  return Mapping{static_cast<std::byte*>(p), bytes, page_bytes};
}

// hugetlb pages of the smallest size worth asking (HugetlbCandidates) whose
// pool on `node` has enough free pages. Without MAP_NORESERVE the kernel
// reserves the pages at mmap time, but reservations are counted system-wide,
// not per node: a fault bound to `node` can still find that node's pool empty
// and raise SIGBUS. So the node's free count is checked first. Residual risk:
// another process taking those pages between this check and the pre-fault.
Expected<Mapping> MapHugetlb(std::size_t bytes, int node, const PageSizes& sizes) {
  const std::vector<std::size_t> candidates = HugetlbCandidates(sizes, bytes);
  if (candidates.empty()) {
    return NodeFailure(Outcome::kAllocFailed, node,
                       "hugetlb: this kernel offers no hugetlb page of 2 MiB up to the buffer's " +
                           PageSizeText(RoundUp(bytes, sizes.base)) + " (" + sizes.sysfs_root +
                           "/kernel/mm/hugepages)");
  }
  std::string shortages;
  for (const std::size_t page : candidates) {
    const std::size_t len = RoundUp(bytes, page);
    const std::size_t need = len / page;
    const std::size_t free_pages = FreeHugetlbPages(sizes, node, page);
    const std::string pool = " (pool size: " + HugetlbPoolPath(sizes, node, page, "nr_hugepages") + ")";
    if (free_pages < need) {
      shortages += (shortages.empty() ? "" : "; ") + std::to_string(free_pages) + " free " + PageSizeText(page) +
                   " pages, need " + std::to_string(need) + pool;
      continue;
    }
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | HugetlbMmapFlags(page), -1, 0);
    if (p == MAP_FAILED) {
      return NodeFailure(Outcome::kAllocFailed, node, SyscallError("hugetlb mmap", errno) + pool);
    }
    return Mapping{static_cast<std::byte*>(p), len, page};
  }
  return NodeFailure(Outcome::kAllocFailed, node, "hugetlb: " + shortages);
}

// A region aligned to the THP (PMD) size (over-allocate, trim both ends), so
// every PMD-sized piece of it can be a transparent huge page. MADV_HUGEPAGE is
// only a request; what was obtained is read back from smaps after the pre-fault.
Expected<Mapping> MapThp(std::size_t bytes, int node, const PageSizes& sizes) {
  const std::size_t huge = sizes.thp;
  const std::size_t len = RoundUp(bytes, huge);
  auto raw = MapAnonymous(len + huge, node, huge);
  if (!raw) return raw.failure();
  std::byte* start = raw->data;
  const auto misalign = reinterpret_cast<std::uintptr_t>(start) % huge;
  std::byte* aligned = start + (misalign == 0 ? 0 : huge - misalign);
  if (aligned > start) munmap(start, static_cast<std::size_t>(aligned - start));
  std::byte* tail = aligned + len;
  const std::size_t tail_bytes = static_cast<std::size_t>(start + raw->bytes - tail);
  if (tail_bytes > 0) munmap(tail, tail_bytes);
  // EINVAL means THP is off at run time: the smaps check reports base pages.
  madvise(aligned, len, MADV_HUGEPAGE);
  return Mapping{aligned, len, huge};
}

// mbind as a raw syscall: a refusal must fail the arena, never silently
// leave the memory on the local node. MPOL_BIND with MPOL_MF_STRICT to one
// node; MPOL_WEIGHTED_INTERLEAVE over the weighted nodes (the weights
// themselves are the kernel's, from sysfs, at fault time).
std::string Bind(const Mapping& m, const ArenaSpec& spec) {
  const bool interleave = !spec.weighted_interleave.empty();
  std::vector<int> nodes;
  if (interleave) {
    for (const auto& [node, weight] : spec.weighted_interleave) nodes.push_back(node);
  } else {
    nodes.push_back(spec.node);
  }
  unsigned long maxnode = 0;
  const std::vector<unsigned long> mask = NodeMask(nodes, maxnode);
  const auto mode = static_cast<unsigned long>(interleave ? kMpolWeightedInterleave : MPOL_BIND);
  const auto flags = static_cast<unsigned long>(interleave ? 0 : MPOL_MF_STRICT);
  if (syscall(SYS_mbind, m.data, m.bytes, mode, mask.data(), maxnode, flags) != 0) {
    return SyscallError(interleave ? "mbind(MPOL_WEIGHTED_INTERLEAVE)" : "mbind", errno);
  }
  return "";
}

// One store per base page: the policy applies at first fault, and a read
// fault would map the shared zero page instead of a page on `node`. Every
// base page, not every huge page, because THP may have fallen back to base
// pages.
void PrefaultByWriting(const Mapping& m, std::size_t base_page) {
  volatile std::byte* p = m.data;
  for (std::size_t off = 0; off < m.bytes; off += base_page) p[off] = std::byte{0};
}

// Share of [data, data + bytes) backed by transparent huge pages, from the
// AnonHugePages lines of /proc/self/smaps. The kernel may merge our VMA with a
// neighbour of identical flags and policy, so each overlapping VMA contributes
// its huge bytes in proportion to the overlap.
double ThpHugeFraction(const std::byte* data, std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t end = begin + bytes;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  double overlap_share = 0;  // overlap / VMA size of the current VMA; 0 if unrelated
  double huge_bytes = 0;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    const char* first = line.data();
    const char* last = line.data() + line.size();
    auto r = std::from_chars(first, last, lo, 16);
    if (r.ec == std::errc() && r.ptr != last && *r.ptr == '-' &&
        std::from_chars(r.ptr + 1, last, hi, 16).ec == std::errc() && hi > lo) {
      const std::uintptr_t ov_lo = std::max(lo, begin);
      const std::uintptr_t ov_hi = std::min(hi, end);
      overlap_share = ov_hi > ov_lo ? static_cast<double>(ov_hi - ov_lo) / static_cast<double>(hi - lo) : 0;
      continue;
    }
    constexpr std::string_view kKey = "AnonHugePages:";
    if (overlap_share == 0 || !line.starts_with(kKey)) continue;
    std::size_t kib = 0;
    const char* num = line.data() + kKey.size();
    while (num < last && *num == ' ') ++num;
    if (std::from_chars(num, last, kib).ec == std::errc()) {
      huge_bytes += overlap_share * static_cast<double>(kib) * 1024;
    }
  }
  return std::clamp(huge_bytes / static_cast<double>(bytes), 0.0, 1.0);
}

Expected<Mapping> MapForPolicy(const ArenaSpec& spec, const PageSizes& sizes, PageKind& kind) {
  if (spec.pages == PagePolicy::kHugetlb || spec.pages == PagePolicy::kAuto) {
    auto m = MapHugetlb(spec.bytes, spec.node, sizes);
    if (m || spec.pages == PagePolicy::kHugetlb) {
      kind = PageKind::kHugetlb;
      return m;
    }
  }
  kind = PageKind::kBase;  // settled after faulting, from smaps
  // THP only where a PMD page fits the buffer (ThpFits): a 16 MiB buffer on a
  // 64 KiB kernel, whose PMD is 512 MiB, stays on base pages.
  if (spec.pages == PagePolicy::kSmall || !ThpFits(sizes, spec.bytes)) {
    auto m = MapAnonymous(RoundUp(spec.bytes, sizes.base), spec.node, sizes.base);
    // Matters when THP is "always"; smaps still has the last word.
    if (m) madvise(m->data, m->bytes, MADV_NOHUGEPAGE);
    return m;
  }
  return MapThp(spec.bytes, spec.node, sizes);
}

}  // namespace

Expected<Arena> Arena::Create(const ArenaSpec& spec) {
  if (spec.bytes == 0) return NodeFailure(Outcome::kInvalidSpec, spec.node, "arena of 0 bytes");
  const bool interleave = !spec.weighted_interleave.empty();
  if (!interleave && (spec.node < 0 || spec.node > kMaxNodeId)) {
    return NodeFailure(Outcome::kInvalidSpec, spec.node, "no such node id");
  }
  for (const auto& [node, weight] : spec.weighted_interleave) {
    if (node < 0 || node > kMaxNodeId) return NodeFailure(Outcome::kInvalidSpec, node, "no such node id");
    if (weight < 1 || weight > 255) {
      return NodeFailure(Outcome::kInvalidSpec, node,
                         "interleave weight " + std::to_string(weight) + " outside 1..255");
    }
  }
  if (interleave && spec.pages == PagePolicy::kHugetlb) {
    return Failure{Outcome::kInvalidSpec, "weighted interleave: hugetlb pools are per node; use THP or base pages"};
  }
  if (spec.page_sizes == nullptr && !HostPageSizes()) return HostPageSizes().failure();
  const PageSizes& sizes = spec.page_sizes != nullptr ? *spec.page_sizes : HostPageSizes().value();

  PageKind kind = PageKind::kBase;
  ArenaSpec map_spec = spec;
  // A hugetlb mapping would be bound to one node's pool: THP or base pages.
  if (interleave && map_spec.pages == PagePolicy::kAuto) map_spec.pages = PagePolicy::kThp;
  auto mapped = MapForPolicy(map_spec, sizes, kind);
  if (!mapped) return mapped.failure();
  const Mapping m = mapped.value();
  // From here on the Arena owns the mapping, so every failure path unmaps it.
  BufferInfo info;
  info.node = interleave ? -1 : spec.node;
  info.bytes = m.bytes;
  info.page_kind = kind;
  info.page_bytes = m.page_bytes;
  Arena arena(m.data, m.bytes, std::move(info));
  arena.weights_ = spec.weighted_interleave;
  arena.base_page_ = sizes.base;
  arena.thp_page_ = sizes.thp;

  if (std::string err = Bind(m, spec); !err.empty()) {
    if (interleave) return Failure{Outcome::kBindFailed, err};
    return NodeFailure(Outcome::kBindFailed, spec.node, err);
  }
  PrefaultByWriting(m, sizes.base);
  if (kind == PageKind::kHugetlb) {
    arena.info_.huge_fraction = 1;
  } else {
    arena.info_.huge_fraction = ThpHugeFraction(m.data, m.bytes);
    const bool thp = arena.info_.huge_fraction > 0.5 && sizes.thp != 0;
    arena.info_.page_kind = thp ? PageKind::kThp : PageKind::kBase;
    arena.info_.page_bytes = thp ? sizes.thp : sizes.base;
  }
  arena.info_.placement =
      interleave ? arena.CheckSplit() : VerifyPlacement(m.data, m.bytes, arena.page_bytes(), spec.node);
  if (!arena.info_.placement.verified()) return PlacementFailure(arena.info_.placement);
  return arena;
}

Arena::Arena(std::byte* data, std::size_t mapped_bytes, BufferInfo info)
    : data_(data), mapped_bytes_(mapped_bytes), info_(std::move(info)) {}

Arena::Arena(Arena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      info_(std::move(other.info_)),
      weights_(std::move(other.weights_)),
      base_page_(other.base_page_),
      thp_page_(other.thp_page_) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    info_ = std::move(other.info_);
    weights_ = std::move(other.weights_);
    base_page_ = other.base_page_;
    thp_page_ = other.thp_page_;
  }
  return *this;
}

Arena::~Arena() { Release(); }

void Arena::Release() {
  if (data_ != nullptr) munmap(data_, mapped_bytes_);
  data_ = nullptr;
  mapped_bytes_ = 0;
}

const PlacementReport& Arena::Reverify(std::size_t pages, std::uint64_t seed) {
  info_.placement =
      weights_.empty() ? VerifyPlacement(data_, info_.bytes, page_bytes(), info_.node, pages, seed) : CheckSplit();
  return info_.placement;
}

// Every base page is asked, not one per huge page: THP may back only part of
// the buffer, and which parts is what GroupUnits finds out.
PlacementReport Arena::CheckSplit() const {
  std::string method;
  const std::vector<int> nodes = PageNodes(data_, info_.bytes, base_page_, method);
  const bool aligned = thp_page_ > base_page_ && reinterpret_cast<std::uintptr_t>(data_) % thp_page_ == 0;
  PlacementReport report =
      kernels::CheckSplit(GroupUnits(nodes, base_page_, aligned ? thp_page_ / base_page_ : 1), weights_);
  report.method = method;
  return report;
}

}  // namespace numaprobe::kernels
