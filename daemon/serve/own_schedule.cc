// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/own_schedule.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "daemon/config/config_values.h"

namespace numaprobe::daemon {

void OwnScheduleQueue::Adopt(std::vector<Task> tasks, const Config& config,
                             const std::map<std::string, double, std::less<>>& finished, ScheduleClock now) {
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
        if (!HasRunsOf(task.kind)) {
          state.cycle_start_ns = old->second.cycle_start_ns;
          state.cycle_start_unix = old->second.cycle_start_unix;
        }
        state.finished_unix = old->second.finished_unix;
      } else if (const auto last = finished.find(task.kind->name()); last != finished.end()) {
        // On the monotonic clock, as long ago as the Unix clocks say; a
        // date in the future (the clock was set back) counts as now.
        const double ago = std::max(0.0, now.unix_seconds - last->second);
        state.cycle_start_ns = now.monotonic_ns - static_cast<std::int64_t>(std::min(ago, 1e9) * 1e9);
        state.cycle_start_unix = last->second;
        state.finished_unix = last->second;
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

std::vector<Task>& OwnScheduleQueue::Due(ScheduleClock now, const std::function<bool(const ProbeKind&)>& recording) {
  queue_.insert(queue_.end(), skipped_.begin(), skipped_.end());
  skipped_.clear();
  for (auto& [kind, state] : kinds_) {
    if (HasRunsOf(kind)) continue;  // a cycle still under way finishes first
    const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(state.schedule.interval).count();
    const bool due =
        !state.cycle_start_ns || recording(*kind) || now.monotonic_ns >= *state.cycle_start_ns + interval_ns;
    if (!due) continue;
    if (state.cycle_start_ns) state.finished_unix = state.cycle_start_unix;  // no runs left: it finished
    state.cycle_start_ns = now.monotonic_ns;
    state.cycle_start_unix = now.unix_seconds;
    queue_.insert(queue_.end(), state.tasks.begin(), state.tasks.end());
  }
  return queue_;
}

std::map<std::string, double, std::less<>> OwnScheduleQueue::FinishedCycles() const {
  std::map<std::string, double, std::less<>> finished;
  for (const auto& [kind, state] : kinds_) {
    if (state.cycle_start_ns && !HasRunsOf(kind)) {
      finished.emplace(kind->name(), state.cycle_start_unix);
    } else if (state.finished_unix) {
      finished.emplace(kind->name(), *state.finished_unix);
    }
  }
  return finished;
}

void OwnScheduleQueue::Announce(const std::map<std::string, double, std::less<>>& finished, double unix_now) const {
  for (const auto& [kind, state] : kinds_) {
    const auto last = finished.find(kind->name());
    spdlog::info("{}: {} runs every {} (at once while its baseline records), within {:.4g}% of one CPU of its own; {}",
                 kind->name(), state.tasks.size(), FormatDuration(state.schedule.interval),
                 state.schedule.duty_cycle * 100,
                 last == finished.end() ? std::string("no cycle finished yet")
                                        : fmt::format("its last finished cycle began {} ago",
                                                      FormatDuration(std::chrono::seconds(static_cast<std::int64_t>(
                                                          std::max(0.0, unix_now - last->second))))));
  }
}

std::map<std::string, double, std::less<>> OwnScheduleQueue::IntervalSeconds() const {
  std::map<std::string, double, std::less<>> seconds;
  for (const auto& [kind, state] : kinds_) {
    seconds.emplace(kind->name(), std::chrono::duration<double>(state.schedule.interval).count());
  }
  return seconds;
}

DutyBudget& OwnScheduleQueue::Budget(const ProbeKind& kind) { return kinds_.at(&kind).budget; }

}  // namespace numaprobe::daemon
