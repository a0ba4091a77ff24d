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
//  - in rotation: every other task, a slice per round, so that a round's
//    expected CPU cost fits `duty_cycle x interval`.
// A cycle is the rounds that run every task once; the baseline is recorded
// from complete cycles, and the refresh interval the daemon exports is that
// of a rotated series (a cycle), against which staleness is judged.
//
// Thread safety: values; TaskCostEstimate is owned by the scheduler loop.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "daemon/serve/round_tasks.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

struct Rotation {
  std::vector<Task> tasks;               // RoundTasks order
  std::vector<std::size_t> every_round;  // indices into tasks, ascending
  // The other tasks, indices ascending, one group per pair: the variants of
  // a pair (bandwidth ops) share a buffer and always run in the same round.
  std::vector<std::vector<std::size_t>> rotated;
  std::size_t rotated_tasks() const;
};

// Splits one full round (RoundTasks) into the representatives of each class
// and the rest. Without firmware distances, a pair is local or remote.
Rotation SplitRound(std::vector<Task> tasks, const kernels::Topology& topology);

// The CPU seconds a task of each kind costs (its measurement and its share
// of buffer preparation), smoothed over recent runs.
class TaskCostEstimate {
 public:
  void Observe(const ProbeKind* kind, double cpu_seconds);
  // Expected CPU seconds of these tasks; nullopt while a kind among them has
  // never run (the first cycle runs everything once and so measures them).
  std::optional<double> Of(const std::vector<Task>& tasks, const std::vector<std::size_t>& which) const;
  std::optional<double> Of(const Rotation& rotation) const;  // the rotated tasks

 private:
  std::map<const ProbeKind*, double> seconds_;
};

// How many rounds a cycle takes: 1 when the whole round fits
// `round_budget_cpu_seconds` (or costs are not known yet), else enough for a
// round's slice of the rotated tasks to fit what the representatives leave
// (at least a quarter of the budget), at most one rotated pair per round.
int RotationRounds(const Rotation& rotation, const TaskCostEstimate& costs, double round_budget_cpu_seconds);

// The tasks of round `index` (0 .. rounds-1) of a cycle: every representative
// and the index-th contiguous slice of the rotated pairs (contiguous, so that
// a slice keeps a memory node's pairs together as one visit), in RoundTasks
// order.
std::vector<Task> RoundOfCycle(const Rotation& rotation, int rounds, int index);

}  // namespace numaprobe::daemon
