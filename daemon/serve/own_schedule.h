// SPDX-License-Identifier: Apache-2.0
// The runs of the kinds on a schedule of their own (ProbeKind::OwnScheduleOf:
// peak bandwidth, whose run loads every CPU of a node and its memory), made
// between the rounds of the others.
//
// Each such kind measures all of its targets once per cycle: the first cycle
// at the first round's end after a start or a replan, then one every
// `interval` after the last began, or at once while the kind's series still
// record their baseline (so that it arms in cycles paced by its budget, not
// in baseline.rounds intervals of hours). Its CPU is paced by a DutyBudget of
// its own, never the rounds' (schedule.duty_cycle): a run starts only when
// that budget allows, else it waits for a later round's end. A run the kind
// skipped (its idle gate found the node busy) is tried again at the next
// round's end, not an interval later.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/serve/budget.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {

class OwnScheduleQueue {
 public:
  // A start, reload or replan: `tasks` (OwnScheduleTasks) under `config`. A
  // kind still planned keeps its budget, and the start of its last cycle if
  // that cycle had finished; a cycle the replan cut short runs again on the
  // new plan at the next Due.
  void Adopt(std::vector<Task> tasks, const Config& config);

  // The runs to make at a round's end (`now_ns`), in order: those left from
  // before, those skipped, then a new cycle of each kind that is due
  // (`recording`: whether the kind's series still record their baseline). The
  // caller runs from the front while each kind's Budget allows, may insert
  // confirmation runs and retries, and erases what it ran.
  std::vector<Task>& Due(std::int64_t now_ns, const std::function<bool(const ProbeKind&)>& recording);
  // Queues `task` again for the next Due: its kind skipped it.
  void Skipped(const Task& task) { skipped_.push_back(task); }

  // The budget `kind`'s runs are charged to and paced by.
  DutyBudget& Budget(const ProbeKind& kind);
  bool empty() const { return kinds_.empty(); }

 private:
  // Whether runs of `kind` are queued or wait after a skip.
  bool HasRunsOf(const ProbeKind* kind) const;

  struct KindState {
    OwnSchedule schedule;
    DutyBudget budget{0.01};
    std::vector<Task> tasks;                     // one cycle
    std::optional<std::int64_t> cycle_start_ns;  // none: the first cycle is due
  };
  std::map<const ProbeKind*, KindState> kinds_;
  std::vector<Task> queue_;
  std::vector<Task> skipped_;
};

}  // namespace numaprobe::daemon
