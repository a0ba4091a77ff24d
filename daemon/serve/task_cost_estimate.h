// SPDX-License-Identifier: Apache-2.0
// What a probe task costs, as the scheduler sizes rounds by it: the CPU
// seconds of a task of each kind, smoothed over recent runs, the first task
// of a visit (which prepares the buffers) and a task continuing one apart.
//
// The estimate is learnt from the runs, kept in the state file so that a
// restart sizes its first rounds right, and can be given as a file: `numaprobe
// topology --task-costs FILE` plans with it, and a test fixes it
// (NUMAPROBE_TEST_TASK_COSTS, common/test_hooks.h) so that the schedule a test
// asserts does not depend on how fast the machine runs. The text is a JSON
// object by kind name:
//   {"latency": {"visit_start": 0.044, "continuation": 0.025}, ...}
// in CPU seconds; "continuation" may be absent (a kind never seen continuing
// a visit).
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/test_hooks.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/serve/round_tasks.h"

namespace numaprobe::daemon {

class TaskCostEstimate {
 public:
  // A run of `kind` that cost `cpu_seconds`; `starts_visit`: it prepared the
  // visit's buffers. Ignored once the estimate is fixed.
  void Observe(const ProbeKind* kind, double cpu_seconds, bool starts_visit);
  // Expected CPU seconds of these tasks run in this order (a task that does
  // not share buffers with the one before starts a visit); nullopt while a
  // kind among them has never run.
  std::optional<double> Of(const std::vector<Task>& tasks, const std::vector<std::size_t>& which) const;
  // Whether every kind among `tasks` has a cost.
  bool Knows(const std::vector<Task>& tasks) const;

  // Stops learning: the costs stay what they are (a test's fixed costs).
  void Fix() { fixed_ = true; }
  bool fixed() const { return fixed_; }

  // The JSON object described above, and back; kinds are looked up in the
  // probe table, and an unknown kind or a cost that is not a finite number
  // >= 0 is an error naming it ("" on success).
  nlohmann::json ToJson() const;
  static std::string FromJson(const nlohmann::json& json, TaskCostEstimate& out);
  // The same from a file's text; `what` names the file in the error.
  static std::string Parse(std::string_view text, const std::string& what, TaskCostEstimate& out);

 private:
  std::map<const ProbeKind*, double> visit_start_;
  std::map<const ProbeKind*, double> continuation_;
  bool fixed_ = false;
};

// The fixed estimate NUMAPROBE_TEST_TASK_COSTS names, if `hooks` name one:
// a test's schedule must not depend on how fast the machine runs. None, and
// an error logged (the costs are then learnt from the runs), if the file
// cannot be read or used: cmd_serve refused to start on such a file, so it
// changed since.
std::optional<TaskCostEstimate> TestTaskCosts(const TestHooks& hooks);

}  // namespace numaprobe::daemon
