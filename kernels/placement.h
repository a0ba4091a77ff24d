// SPDX-License-Identifier: Apache-2.0
// Where does this memory live? move_pages(2) with nodes == NULL moves nothing
// and returns each page's node. Container runtimes' default seccomp profiles
// block move_pages (EPERM); then get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR) is asked
// per page instead, which is only safe on memory already written (it faults a
// page in as if read otherwise) - Arena always writes first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace numaprobe::kernels {

// Checks every page of [addr, addr+bytes) (or `max_pages` of them spread at
// random when max_pages != 0) against `expected_node`.
PlacementReport VerifyPlacement(const void* addr, std::size_t bytes, std::size_t page_bytes, int expected_node,
                                std::size_t max_pages = 0, std::uint64_t seed = 0);

// The node of every page of [addr, addr+bytes) in address order, one per
// `page_bytes` (negative: -errno, the page not present or not reported), asked
// as VerifyPlacement asks; `method` says how ("none": both refused).
std::vector<int> PageNodes(const void* addr, std::size_t bytes, std::size_t page_bytes, std::string& method);

// The Failure to report for a report that is not verified(): kPlacementMismatch
// with the split's reason (a weighted-interleave buffer) or naming the first
// misplaced page, else kPlacementUnverified.
Failure PlacementFailure(const PlacementReport& report);

}  // namespace numaprobe::kernels
