// SPDX-License-Identifier: Apache-2.0
#include "kernels/result.h"

namespace numaprobe::kernels {

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kInvalidSpec:
      return "invalid_spec";
    case Outcome::kNotAllowed:
      return "not_allowed";
    case Outcome::kAllocFailed:
      return "alloc_failed";
    case Outcome::kBindFailed:
      return "bind_failed";
    case Outcome::kPlacementMismatch:
      return "placement_mismatch";
    case Outcome::kPlacementUnverified:
      return "placement_unverified";
    case Outcome::kPinFailed:
      return "pin_failed";
    case Outcome::kDisturbed:
      return "disturbed";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kCancelled:
      return "cancelled";
    case Outcome::kCoarseClock:
      return "coarse_clock";
    case Outcome::kThreadLimit:
      return "thread_limit";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "unknown";
}

std::string_view PageKindName(PageKind kind) {
  switch (kind) {
    case PageKind::kSmall4K:
      return "4KiB";
    case PageKind::kThp2M:
      return "2MiB-thp";
    case PageKind::kHugetlb2M:
      return "2MiB-hugetlb";
  }
  return "unknown";
}

std::string_view PagePolicyName(PagePolicy policy) {
  switch (policy) {
    case PagePolicy::kAuto:
      return "auto";
    case PagePolicy::kHugetlb:
      return "hugetlb";
    case PagePolicy::kThp:
      return "thp";
    case PagePolicy::kSmall:
      return "4k";
  }
  return "unknown";
}

}  // namespace numaprobe::kernels
