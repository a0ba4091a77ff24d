// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/planned_runs.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

PlannedRuns RunsOfPlan(const Plan& plan, const Config& config, const kernels::Topology& topology) {
  PlannedRuns runs;
  for (Task& task : RoundTasks(plan, config, topology)) {
    ++runs.round_runs_of[task.kind];
    if (task.kind->traits().has_baseline) runs.series.insert(task.kind->SeriesOf(task.target, config.targets.per_cpu));
    runs.round_targets.push_back(std::move(task.target));
  }
  runs.own = OwnScheduleTasks(plan, config, topology);
  for (const Task& task : runs.own) {
    if (task.kind->traits().has_baseline) runs.series.insert(task.kind->SeriesOf(task.target, config.targets.per_cpu));
  }
  return runs;
}

void LogPlan(const Plan& plan, const PlannedRuns& runs) {
  for (const auto& note : plan.notes) spdlog::info("plan: {}", note);
  std::string per_kind;
  for (const ProbeKind* kind : ProbeTable()) {
    if (const auto it = runs.round_runs_of.find(kind); it != runs.round_runs_of.end()) {
      per_kind += fmt::format(", {} {}", it->second, kind->name());
    }
  }
  spdlog::info("probe plan: {} memory pairs; runs per round{}", plan.memory_pairs.size(),
               per_kind.empty() ? ": none" : per_kind);
}

}  // namespace numaprobe::daemon
