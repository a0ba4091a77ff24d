// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/task_cost_estimate.h"

#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/probing/probe_table.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {

namespace {

const ProbeKind* KindNamed(std::string_view name) {
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->name() == name) return kind;
  }
  return nullptr;
}

}  // namespace

void TaskCostEstimate::Observe(const ProbeKind* kind, double cpu_seconds, bool starts_visit) {
  if (fixed_) return;
  // An exponential average: recent runs count most (a reload may change the
  // settings), one odd run does not decide the schedule.
  auto& seconds = starts_visit ? visit_start_ : continuation_;
  const auto [it, first] = seconds.try_emplace(kind, cpu_seconds);
  if (!first) it->second = 0.7 * it->second + 0.3 * cpu_seconds;
}

std::optional<double> TaskCostEstimate::Of(const std::vector<Task>& tasks,
                                           const std::vector<std::size_t>& which) const {
  double total = 0;
  for (std::size_t k = 0; k < which.size(); ++k) {
    const Task& task = tasks[which[k]];
    const bool starts_visit = k == 0 || !SharesBuffers(tasks[which[k - 1]], task);
    const auto start = visit_start_.find(task.kind);
    if (start == visit_start_.end()) return std::nullopt;
    const auto more = continuation_.find(task.kind);
    // A kind never seen continuing a visit (one task per visit so far): each
    // further task is costed like a visit's first, which over-estimates.
    total += starts_visit || more == continuation_.end() ? start->second : more->second;
  }
  return total;
}

bool TaskCostEstimate::Knows(const std::vector<Task>& tasks) const {
  for (const Task& task : tasks) {
    if (!visit_start_.contains(task.kind)) return false;
  }
  return true;
}

nlohmann::json TaskCostEstimate::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [kind, seconds] : visit_start_) json[std::string(kind->name())]["visit_start"] = seconds;
  for (const auto& [kind, seconds] : continuation_) json[std::string(kind->name())]["continuation"] = seconds;
  return json;
}

std::string TaskCostEstimate::FromJson(const nlohmann::json& json, TaskCostEstimate& out) {
  TaskCostEstimate costs;
  if (!json.is_object()) return "task costs: expected an object by probe kind";
  for (const auto& [name, entry] : json.items()) {
    const ProbeKind* kind = KindNamed(name);
    if (kind == nullptr) return fmt::format("task costs: unknown probe kind \"{}\"", name);
    if (!entry.is_object()) return fmt::format("task costs.{}: expected an object", name);
    for (const auto& [key, value] : entry.items()) {
      if (key != "visit_start" && key != "continuation") {
        return fmt::format("task costs.{}.{}: unknown key (visit_start, continuation)", name, key);
      }
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
        return fmt::format("task costs.{}.{}: expected CPU seconds (a number >= 0)", name, key);
      }
      (key == "visit_start" ? costs.visit_start_ : costs.continuation_)[kind] = value.get<double>();
    }
    if (!costs.visit_start_.contains(kind)) return fmt::format("task costs.{}: visit_start missing", name);
  }
  out = std::move(costs);
  return "";
}

std::string TaskCostEstimate::Parse(std::string_view text, const std::string& what, TaskCostEstimate& out) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fmt::format("{}: not valid JSON", what);
  if (auto error = FromJson(json, out); !error.empty()) return fmt::format("{}: {}", what, error);
  return "";
}

std::optional<TaskCostEstimate> TestTaskCosts(const TestHooks& hooks) {
  if (hooks.task_costs_file.empty()) return std::nullopt;
  std::string text;
  TaskCostEstimate fixed;
  const std::string error = kernels::ReadWholeFile(hooks.task_costs_file, text) != 0
                                ? fmt::format("cannot read {}", hooks.task_costs_file)
                                : TaskCostEstimate::Parse(text, hooks.task_costs_file, fixed);
  if (!error.empty()) {
    spdlog::error("{}: task costs are learnt from the runs", error);
    return std::nullopt;
  }
  fixed.Fix();
  return fixed;
}

}  // namespace numaprobe::daemon
