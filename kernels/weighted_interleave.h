// SPDX-License-Identifier: Apache-2.0
// Memory spread over nodes by MPOL_WEIGHTED_INTERLEAVE (Linux 6.9+), and the
// check that the kernel spread it as the weights say.
//
// The kernel places each interleave unit (a base page, or a huge page where
// THP backs the memory) by its index in the mapping, ilx (mm/mempolicy.c,
// get_vma_policy and weighted_interleave_nid): of every W = sum of weights
// consecutive units, node i (in node order) gets w_i. So in a run of n
// consecutive units of one size node i holds floor(n / W) * w_i units plus
// between 0 and w_i of the last, partial cycle, wherever the run starts in a
// cycle. A buffer partly backed by THP is several such runs (huge units and
// base units have separate indices), each within one cycle. The weights are
// the caller's (the kernel's current ones, as sysfs gives them); an
// allocation that does not match them is a failed check, never a figure.
//
// Arena::Create (ArenaSpec::weighted_interleave) allocates with the policy
// and runs the check; this header holds the policy's constant, the
// arithmetic and whether the running kernel has the policy at all.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace numaprobe::kernels {

// MPOL_WEIGHTED_INTERLEAVE, include/uapi/linux/mempolicy.h since Linux 6.9.
// Debian 12's numaif.h (libnuma 2.0.16) predates it, so it is defined here.
inline constexpr int kMpolWeightedInterleave = 6;

// Consecutive interleave units of one size and where they live.
struct UnitRun {
  std::size_t unit_bytes = 0;
  std::map<int, std::size_t> units = {};  // node -> units of this run on it
  std::size_t total() const;
};

// The runs of a buffer whose base pages (of `base_bytes`, in address order)
// are on `page_nodes` (negative: unknown; such a page ends up under key -1).
// With `pages_per_huge` > 1 (the buffer starts on a THP boundary), every
// whole, aligned group of that many pages all on one node is one huge unit:
// base-page interleave never puts that many consecutive pages on one node
// when two nodes have weights (a weight is at most 255).
std::vector<UnitRun> GroupUnits(const std::vector<int>& page_nodes, std::size_t base_bytes, std::size_t pages_per_huge);

// The split `runs` show against `weights` (node -> weight, 1..255): each
// node's share of the bytes in node_shares, and split_mismatch naming the
// first node whose units in some run lie outside that run's one cycle of its
// weight's share, a node outside `weights` holding units, or units of
// unknown placement. pages_checked counts units, pages_misplaced those
// beyond their bounds, pages_unknown the unknown ones.
PlacementReport CheckSplit(const std::vector<UnitRun>& runs, const std::map<int, int>& weights);

// Whether this kernel accepts MPOL_WEIGHTED_INTERLEAVE over `nodes` (nodes
// the process may use): "" if it does, else the mbind error (EINVAL: a kernel
// before 6.9, which does not know the mode). Binds one page it maps and
// unmaps.
std::string WeightedInterleaveRefusal(const std::vector<int>& nodes);

// The mbind(2) node mask of `nodes` and its maxnode argument.
std::vector<unsigned long> NodeMask(const std::vector<int>& nodes, unsigned long& maxnode);

}  // namespace numaprobe::kernels
