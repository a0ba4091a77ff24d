// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/task_cost_measure.h"

#include <fmt/format.h>

#include "daemon/probing/plan.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"
#include "daemon/serve/probe_executor.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {

namespace k = kernels;

k::Expected<TaskCostEstimate> MeasureTaskCosts(const Config& config, const k::Topology& host) {
  auto plan = BuildPlan(config.targets, host);
  if (!plan.ok()) return plan.failure();
  auto lock = ProbeLock::Open(config.probe_lock_file);
  if (!lock.ok()) return lock.failure();
  std::unique_ptr<ProbeExecutor> executor = WorkerExecutor(config.schedule.priority);
  executor->Adopt(host, config, ProbeSettingsFrom(config), lock.value(), [] {});
  const std::vector<Task> tasks = RoundTasks(plan.value(), config, host);
  TaskCostEstimate costs;
  const std::atomic<bool> never_stop{false};
  for (const ProbeKind* kind : ProbeTable()) {
    const auto first = std::find_if(tasks.begin(), tasks.end(), [&](const Task& t) { return t.kind == kind; });
    if (first == tasks.end()) continue;
    // A task that continues the visit: the next one sharing its buffers, or
    // the same target again.
    const auto next = first + 1 != tasks.end() && SharesBuffers(*first, *(first + 1)) ? *(first + 1) : *first;
    for (const Task* task : {&*first, &next}) {
      const bool starts_visit = task == &*first;
      executor->Start(*task, /*ends_visit=*/!starts_visit, &never_stop);
      while (!executor->Wait(std::chrono::milliseconds(100))) {
      }
      const ProbeRun run = executor->Result();
      if (run.record->outcome() == k::Outcome::kThreadLimit || run.record->outcome() == k::Outcome::kCancelled) {
        return k::Failure{run.record->outcome(),
                          fmt::format("cannot measure what a {} task costs: {}", kind->name(), run.record->reason())};
      }
      costs.Observe(kind, run.cpu_seconds, starts_visit);
    }
  }
  return costs;
}

}  // namespace numaprobe::daemon
