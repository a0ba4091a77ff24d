// SPDX-License-Identifier: Apache-2.0
// Outcome, failure and result value types shared by every probe kernel.
//
// Kernels never throw for an expected probe failure, never log and never exit:
// they return one of these values and the caller decides how to present it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace numaprobe::kernels {

// Why a probe produced (or did not produce) a figure. The names returned by
// OutcomeName() are a stable contract: they become the `result` label of
// numaprobe_probe_runs_total and the "outcome" field of the JSON output.
enum class Outcome {
  kOk,
  kInvalidSpec,          // the caller asked for something impossible (size 0, bad CPU id ...)
  kNotAllowed,           // CPU or node outside this process's affinity / cpuset.mems
  kAllocFailed,          // mmap / hugetlb / memory budget
  kBindFailed,           // mbind refused (EPERM under seccomp, EINVAL outside cpuset.mems ...)
  kPlacementMismatch,    // memory was verified to live on another node than requested
  kPlacementUnverified,  // the kernel would not tell us where the memory lives
  kPinFailed,            // sched_setaffinity to the requested CPU failed
  kDisturbed,            // too many samples discarded (context switch, migration)
  kTimeout,              // a partner thread did not answer in time (c2c)
  kCancelled,            // the caller's stop flag was raised
  kCoarseClock,          // samples spanned too few steps of the clock for a 1% figure (timer_resolution.h)
  kThreadLimit,          // a thread the measurement needs could not be created (task limit)
  kSkipped,              // not measured: the caller's gate said no (the daemon's idle gate found the CPUs busy)
};
inline constexpr Outcome kAllOutcomes[] = {Outcome::kOk,
                                           Outcome::kInvalidSpec,
                                           Outcome::kNotAllowed,
                                           Outcome::kAllocFailed,
                                           Outcome::kBindFailed,
                                           Outcome::kPlacementMismatch,
                                           Outcome::kPlacementUnverified,
                                           Outcome::kPinFailed,
                                           Outcome::kDisturbed,
                                           Outcome::kTimeout,
                                           Outcome::kCancelled,
                                           Outcome::kCoarseClock,
                                           Outcome::kThreadLimit,
                                           Outcome::kSkipped};

std::string_view OutcomeName(Outcome outcome);

struct Failure {
  Outcome outcome = Outcome::kInvalidSpec;
  std::string reason;  // one line, names the offending object ("node 1: mbind: Operation not permitted")
};

// A value or the Failure explaining why there is none (std::expected is C++23).
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Expected(Failure failure) : v_(std::move(failure)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const Failure& failure() const { return std::get<Failure>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Failure> v_;
};

// How a probe buffer is backed. The obtained kind is always reported, because
// TLB cost differs between them (see docs/measurement.md).
enum class PagePolicy {
  kAuto,     // hugetlb (2 MiB and up, kernels/page_sizes.h), then THP via madvise, then base pages
  kHugetlb,  // hugetlb or fail
  kThp,      // THP via madvise(MADV_HUGEPAGE); falls back to base pages and says so
  kSmall,    // base pages only (MADV_NOHUGEPAGE): 4 KiB on x86-64, 4, 16 or 64 KiB on arm64
};
inline constexpr PagePolicy kAllPagePolicies[] = {PagePolicy::kAuto, PagePolicy::kHugetlb, PagePolicy::kThp,
                                                  PagePolicy::kSmall};
// What backs a buffer; its size is BufferInfo::page_bytes.
enum class PageKind { kBase, kThp, kHugetlb };
std::string_view PagePolicyName(PagePolicy policy);  // "auto", "hugetlb", "thp", "4k": what config and flags accept

// Result of checking, page by page, on which NUMA node a buffer lives.
struct PlacementReport {
  int expected_node = -1;
  std::size_t pages_checked = 0;
  std::size_t pages_misplaced = 0;   // on another node
  std::size_t pages_unknown = 0;     // not present / kernel returned an error for the page
  int observed_node = -1;            // node of the first misplaced page, -1 if none
  std::size_t misplaced_offset = 0;  // byte offset of the first misplaced page
  std::string method;                // "move_pages" | "get_mempolicy" | "none" (both refused)
  // A weighted-interleave buffer (ArenaSpec::weighted_interleave,
  // kernels/weighted_interleave.h): the share of its bytes found on each
  // node, and why that split does not match the weights ("": it does;
  // pages_misplaced then counts the units beyond one cycle of their share).
  std::map<int, double> node_shares = {};
  std::string split_mismatch = {};
  bool verified() const { return pages_checked > 0 && pages_misplaced == 0 && pages_unknown == 0; }
};

// Samples thrown away, by reason. They are retried, never averaged in.
struct Discards {
  std::uint64_t context_switch = 0;  // getrusage(RUSAGE_THREAD) nvcsw/nivcsw changed
  std::uint64_t migration = 0;       // sched_getcpu() changed during the sample
  std::uint64_t timeout = 0;         // partner did not answer within the sample deadline
  std::uint64_t total() const { return context_switch + migration + timeout; }
  Discards& operator+=(const Discards& o) {
    context_switch += o.context_switch;
    migration += o.migration;
    timeout += o.timeout;
    return *this;
  }
};

// Robust summary of accepted samples (see kernels/stats.h).
struct SampleStats {
  double median = 0;
  double min = 0;
  double max = 0;
  double mad = 0;  // median absolute deviation from the median (unscaled)
  std::size_t n = 0;
};

// How finely the clock timed a run's samples (kernels/timer_resolution.h):
// reported with every figure, so a reader can tell a quantised one.
struct ClockReport {
  double resolution_seconds = 0;  // smallest step of the clock, measured at the start of the run
  // The shortest accepted sample (0 if none); with kCoarseClock, the sample
  // the clock could not time.
  double shortest_sample_seconds = 0;
  std::int64_t min_steps_per_sample = 0;
};

// What backs a measured buffer: reported with every memory figure.
struct BufferInfo {
  int node = -1;
  std::size_t bytes = 0;
  PageKind page_kind = PageKind::kBase;
  std::size_t page_bytes = 0;  // the page size obtained (the host's, kernels/page_sizes.h); 0: never allocated
  double huge_fraction = 0;    // share of the buffer actually backed by huge (THP or hugetlb) pages
  PlacementReport placement;
};

// The page size a buffer got, as the JSON and the page_size label give it:
// "4KiB", "64KiB" (base pages), "2MiB-thp", "512MiB-thp", "2MiB-hugetlb";
// "unknown" for a buffer never allocated.
std::string PageSizeName(const BufferInfo& buffer);

}  // namespace numaprobe::kernels
