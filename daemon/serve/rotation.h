// SPDX-License-Identifier: Apache-2.0
// Rounds on big hosts. A round of every pair costs CPU in proportion to the
// number of pairs (N x N memory pairs on an N-node host), and the duty-cycle
// budget does not grow with it: at the default 0.2 % of one CPU an 8-node
// host's full round takes well over an hour (docs/detection.md, "Big hosts").
// So when a full round does not fit the budget of one interval, the tasks
// are split:
//  - every round: one pair of each class (probe kind x node distance x CPU
//    relation), with all its variants. A kernel, microcode or firmware
//    rollout moves a whole class; its representative shows that at the round
//    cadence.
//  - in rotation: every other task, in whole visits (a memory node's pairs
//    of one kind share one buffer preparation, which costs more than their
//    measurements), a slice per round.
// Rotating re-prepares the representatives' buffers every round, so a cycle
// costs more CPU than one full round: rounds rotate only when a full round
// costs more than kRotateAbove intervals' budget (it would last more than
// kRotateAbove intervals), and then each round is sized to about that cost,
// so rounds last about kRotateAbove intervals (10 min at the defaults).
// A cycle is the rounds that run every task once; the refresh interval the
// daemon exports is that of a rotated series (a cycle), against which
// staleness is judged. The representatives of each kind are chosen on as few
// memory nodes as cover its classes: every memory node a round visits costs
// a buffer preparation.
//
// Thread safety: values.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/serve/round_tasks.h"
#include "daemon/serve/task_cost_estimate.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

inline constexpr double kRotateAbove = 2.0;

struct Rotation {
  std::vector<Task> tasks;               // RoundTasks order
  std::vector<std::size_t> every_round;  // indices into tasks, ascending
  // The other tasks, indices ascending, one group per visit (consecutive
  // tasks that share buffers: SharesBuffers): a visit always runs whole, in
  // one round.
  std::vector<std::vector<std::size_t>> rotated;
  std::size_t rotated_tasks() const;
};

// Splits one full round (RoundTasks) into the representatives of each class
// and the rest. Without firmware distances, a pair is local or remote.
Rotation SplitRound(std::vector<Task> tasks, const kernels::Topology& topology);

// How many rounds a cycle takes: 1 while costs are not known yet or a full
// round costs at most kRotateAbove x `round_budget_cpu_seconds`; else enough
// for a round's slice of the rotated visits to fit what the representatives
// leave of kRotateAbove budgets (at least one budget), at most one visit a
// round.
int RotationRounds(const Rotation& rotation, const TaskCostEstimate& costs, double round_budget_cpu_seconds);

// The CPU seconds of one full round (every task once, in RoundTasks order);
// nullopt while a kind among them has never run.
std::optional<double> FullRoundCpuSeconds(const Rotation& rotation, const TaskCostEstimate& costs);

// The representatives alone, in RoundTasks order: the first round after a
// start or a replan.
std::vector<Task> Representatives(const Rotation& rotation);

// Names the task list (kinds and targets, in order): a restart goes on with
// the rotation it left only if the list is the same (RotationPosition).
std::string RotationSignature(const Rotation& rotation);

// The tasks of round `index` (0 .. rounds-1) of a cycle: every representative
// and the index-th contiguous slice of the rotated visits, in RoundTasks
// order.
std::vector<Task> RoundOfCycle(const Rotation& rotation, int rounds, int index);

}  // namespace numaprobe::daemon
