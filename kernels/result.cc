// SPDX-License-Identifier: Apache-2.0
#include "kernels/result.h"

#include "kernels/page_sizes.h"

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

std::string PageSizeName(const BufferInfo& buffer) {
  if (buffer.page_bytes == 0) return "unknown";
  const std::string size = PageSizeText(buffer.page_bytes);
  switch (buffer.page_kind) {
    case PageKind::kBase:
      return size;
    case PageKind::kThp:
      return size + "-thp";
    case PageKind::kHugetlb:
      return size + "-hugetlb";
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
