// SPDX-License-Identifier: Apache-2.0
// Says in the log when the schedule starts rotating (rotation.h), changes its
// number of rounds or stops rotating, each in words that are true of that
// change, with the costs that decided it: an operator who sees a series
// refreshed only once a cycle reads why there. Nothing is said while the
// number of rounds stays the same.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include "daemon/serve/rotation.h"
#include "daemon/serve/task_cost_estimate.h"

namespace numaprobe::daemon {

class RotationAnnouncer {
 public:
  // The rotation the next round runs, in `rounds` rounds a cycle, as sized by
  // `costs` against `round_budget_cpu_seconds` (the CPU one interval's budget
  // allows): logs if `rounds` changed since the last call.
  void Announce(const Rotation& rotation, int rounds, const TaskCostEstimate& costs, double round_budget_cpu_seconds);

 private:
  int announced_rounds_ = 0;  // 0: none yet
};

}  // namespace numaprobe::daemon
