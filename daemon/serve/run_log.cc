// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/run_log.h"

#include <spdlog/spdlog.h>

#include <string>

#include "daemon/common/task_limits.h"

namespace numaprobe::daemon {

namespace {

std::string RunName(const Task& task) { return task.kind->Describe(task.target); }

}  // namespace

void LogRunStart(const Task& task) {
  spdlog::debug("starting {}{}", RunName(task),
                task.confirmation  ? " (confirmation)"
                : task.attempt > 0 ? " (retry)"
                                   : "");
}

void LogRunEnd(const Task& task, const ProbeRun& ran, int confirmations) {
  namespace k = kernels;
  const k::Outcome outcome = ran.record->outcome();
  if (outcome == k::Outcome::kOk) {
    spdlog::debug("{}: ok ({:.1f} ms CPU)", RunName(task), ran.cpu_seconds * 1e3);
  } else if (outcome == k::Outcome::kSkipped) {
    spdlog::info("{}: skipped: {}", RunName(task), ran.record->reason());
  } else if (outcome != k::Outcome::kCancelled) {
    spdlog::warn("{}: {}: {}{}", RunName(task), k::OutcomeName(outcome), ran.record->reason(),
                 outcome == k::Outcome::kThreadLimit ? " (" + DescribeTaskLimits() + ")" : "");
  }
  if (confirmations > 0) {
    spdlog::debug("{}: figure beyond its band, {} confirmation runs next", RunName(task), confirmations);
  }
}

}  // namespace numaprobe::daemon
