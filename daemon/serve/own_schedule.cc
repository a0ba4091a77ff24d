// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/own_schedule.h"

#include <algorithm>
#include <chrono>

namespace numaprobe::daemon {

void OwnScheduleQueue::Adopt(std::vector<Task> tasks, const Config& config) {
  std::map<const ProbeKind*, KindState> kinds;
  for (Task& task : tasks) {
    auto [it, added] = kinds.try_emplace(task.kind);
    if (added) {
      KindState& state = it->second;
      state.schedule = task.kind->OwnScheduleOf(config).value_or(OwnSchedule{});
      if (const auto old = kinds_.find(task.kind); old != kinds_.end()) {
        state.budget = old->second.budget;
        // A cycle cut short by the replan starts again on the new plan at
        // the next round's end; a finished one keeps its interval.
        if (!HasRunsOf(task.kind)) state.cycle_start_ns = old->second.cycle_start_ns;
      }
      state.budget.set_ratio(state.schedule.duty_cycle);
    }
    it->second.tasks.push_back(std::move(task));
  }
  kinds_ = std::move(kinds);
  // Left-over runs of the old plan: the kinds' next cycles measure the new one.
  queue_.clear();
  skipped_.clear();
}

bool OwnScheduleQueue::HasRunsOf(const ProbeKind* kind) const {
  const auto of_kind = [&](const Task& t) { return t.kind == kind; };
  return std::any_of(queue_.begin(), queue_.end(), of_kind) || std::any_of(skipped_.begin(), skipped_.end(), of_kind);
}

std::vector<Task>& OwnScheduleQueue::Due(std::int64_t now_ns, const std::function<bool(const ProbeKind&)>& recording) {
  queue_.insert(queue_.end(), skipped_.begin(), skipped_.end());
  skipped_.clear();
  for (auto& [kind, state] : kinds_) {
    if (HasRunsOf(kind)) continue;  // a cycle still under way finishes first
    const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(state.schedule.interval).count();
    const bool due = !state.cycle_start_ns || recording(*kind) || now_ns >= *state.cycle_start_ns + interval_ns;
    if (!due) continue;
    state.cycle_start_ns = now_ns;
    queue_.insert(queue_.end(), state.tasks.begin(), state.tasks.end());
  }
  return queue_;
}

DutyBudget& OwnScheduleQueue::Budget(const ProbeKind& kind) { return kinds_.at(&kind).budget; }

}  // namespace numaprobe::daemon
