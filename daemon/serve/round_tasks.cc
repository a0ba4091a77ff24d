// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/round_tasks.h"

#include <algorithm>

#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

bool SharesBuffers(const Task& a, const Task& b) {
  return a.kind == b.kind && a.target.pair.mem_node == b.target.pair.mem_node && !a.confirmation && !b.confirmation;
}

namespace {

// The tasks of the enabled kinds that run in rounds (`own_schedule` false) or
// on a schedule of their own (true).
std::vector<Task> TasksOf(const Plan& plan, const Config& config, const kernels::Topology& topology,
                          bool own_schedule) {
  const ProbeSettings settings = ProbeSettingsFrom(config);
  std::vector<Task> tasks;
  for (const ProbeKind* kind : ProbeTable()) {
    if (!kind->Enabled(config) || kind->OwnScheduleOf(config).has_value() != own_schedule) continue;
    const auto first = static_cast<std::ptrdiff_t>(tasks.size());
    for (ProbeTarget& target : kind->Targets(plan, settings, topology)) tasks.push_back({kind, std::move(target), 0});
    // Stable: a pair's variants (bandwidth ops) stay together, in order.
    std::stable_sort(tasks.begin() + first, tasks.end(),
                     [](const Task& a, const Task& b) { return a.target.pair.mem_node < b.target.pair.mem_node; });
  }
  return tasks;
}

}  // namespace

std::vector<Task> RoundTasks(const Plan& plan, const Config& config, const kernels::Topology& topology) {
  return TasksOf(plan, config, topology, false);
}

std::vector<Task> OwnScheduleTasks(const Plan& plan, const Config& config, const kernels::Topology& topology) {
  return TasksOf(plan, config, topology, true);
}

void QueueConfirmations(std::vector<Task>& round, std::size_t current, int runs) {
  Task confirm = round[current];
  confirm.confirmation = true;
  confirm.attempt = 0;
  std::size_t at = current + 1;
  while (at < round.size() && SharesBuffers(round[at - 1], round[at])) ++at;
  round.insert(round.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::size_t>(runs), confirm);
}

void QueueFollowUps(std::vector<Task>& round, std::size_t current, kernels::Outcome outcome, int confirmations) {
  if (outcome == kernels::Outcome::kDisturbed && round[current].attempt == 0) {
    Task retry = round[current];
    retry.attempt = 1;
    round.push_back(std::move(retry));
  }
  if (confirmations > 0) QueueConfirmations(round, current, confirmations);
}

}  // namespace numaprobe::daemon
