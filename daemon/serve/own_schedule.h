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
// When each kind's last finished cycle began is kept in the state file
// (ScheduleMemory::own_cycles): after a restart the next cycle waits out the
// rest of its interval, so that a daemon restarted often (a crash loop, a
// rollout) does not load every node at each start.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/serve/budget.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {

// Both clocks: monotonic paces the cycles, Unix is what a restart can compare.
struct ScheduleClock {
  std::int64_t monotonic_ns = 0;
  double unix_seconds = 0;
};

class OwnScheduleQueue {
 public:
  // A start, reload or replan at `now`: `tasks` (OwnScheduleTasks) under
  // `config`. A kind still planned keeps its budget, and the start of its
  // last cycle if that cycle had finished; a cycle the replan cut short runs
  // again on the new plan at the next Due. A kind new to the queue (every
  // kind at start) takes its last finished cycle from `finished` (the state
  // file's FinishedCycles of the last run), if there.
  void Adopt(std::vector<Task> tasks, const Config& config, const std::map<std::string, double, std::less<>>& finished,
             ScheduleClock now);

  // The runs to make at a round's end (`now`), in order: those left from
  // before, those skipped, then a new cycle of each kind that is due
  // (`recording`: whether the kind's series still record their baseline). The
  // caller runs from the front while each kind's Budget allows, may insert
  // confirmation runs and retries, and erases what it ran.
  std::vector<Task>& Due(ScheduleClock now, const std::function<bool(const ProbeKind&)>& recording);
  // When each kind's last finished cycle began (Unix seconds), by kind name:
  // what the state file keeps.
  std::map<std::string, double, std::less<>> FinishedCycles() const;
  // Queues `task` again for the next Due: its kind skipped it.
  void Skipped(const Task& task) { skipped_.push_back(task); }

  // Logs each kind's runs, interval and budget, and when its last cycle
  // began (`finished`, as FinishedCycles; `unix_now`: now), so that after a
  // restart the log says why it does not run at once.
  void Announce(const std::map<std::string, double, std::less<>>& finished, double unix_now) const;

  // Each kind's interval in seconds, by kind name (RefreshOf::own_schedule_seconds).
  std::map<std::string, double, std::less<>> IntervalSeconds() const;

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
    double cycle_start_unix = 0;
    std::optional<double> finished_unix;  // the start of the last finished cycle
  };
  std::map<const ProbeKind*, KindState> kinds_;
  std::vector<Task> queue_;
  std::vector<Task> skipped_;
};

}  // namespace numaprobe::daemon
