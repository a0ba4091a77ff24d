// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/test_hooks.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace numaprobe::daemon {
namespace {

constexpr const char* kMode = "NUMAPROBE_TEST_MODE";
constexpr const char* kOverrides = "NUMAPROBE_TEST_HOST_OVERRIDES";
constexpr const char* kTaskCosts = "NUMAPROBE_TEST_TASK_COSTS";
constexpr const char* kConfirmations = "NUMAPROBE_TEST_CONFIRMATIONS";

std::string ScaleVariable(const std::string& kind) {
  std::string name = "NUMAPROBE_TEST_SCALE_";
  for (char c : kind) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::string ParseScale(const std::string& name, const char* text, double& out) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || value <= 0 || value > 100) {
    return fmt::format("{}={}: expected a positive factor such as 1.15", name, text);
  }
  out = value;
  return "";
}

}  // namespace

std::string TestHooks::DescribeScales(std::string_view what) const {
  std::string text;
  for (const auto& [kind, factor] : scales) {
    text += fmt::format("{}{}{} x{}", text.empty() ? "" : ", ", kind, what, factor);
  }
  return text;
}

std::string ReadTestHooks(TestHooks& hooks, const GetEnv& getenv, const std::vector<std::string>& scaled_kinds) {
  hooks = TestHooks{};
  const char* overrides = getenv(kOverrides);
  const char* task_costs = getenv(kTaskCosts);
  const char* confirmations = getenv(kConfirmations);
  std::string variables = kOverrides;
  bool any = overrides != nullptr || task_costs != nullptr || confirmations != nullptr;
  for (const std::string& kind : scaled_kinds) {
    const std::string variable = ScaleVariable(kind);
    variables += ", " + variable;
    any = any || getenv(variable.c_str()) != nullptr;
  }
  variables += fmt::format(", {}, {}", kTaskCosts, kConfirmations);
  if (!any) return "";
  const char* mode = getenv(kMode);
  if (mode == nullptr || std::string(mode) != "1") {
    return fmt::format(
        "test-only hooks ({}) are set but {}=1 is not: refusing to run with faked host facts "
        "or figures outside tests",
        variables, kMode);
  }
  for (const std::string& kind : scaled_kinds) {
    double factor = 1;
    const std::string variable = ScaleVariable(kind);
    if (const char* text = getenv(variable.c_str()); text != nullptr) {
      if (auto error = ParseScale(variable, text, factor); !error.empty()) return error;
    }
    hooks.scales.emplace_back(kind, factor);
  }
  if (task_costs != nullptr) {
    if (task_costs[0] != '/') return fmt::format("{}={}: expected an absolute file name", kTaskCosts, task_costs);
    hooks.task_costs_file = task_costs;
  }
  if (confirmations != nullptr) {
    if (std::string(confirmations) != "off") return fmt::format("{}={}: expected off", kConfirmations, confirmations);
    hooks.confirmations_off = true;
  }
  if (overrides != nullptr) {
    static const std::set<std::string> kFields = {"kernel", "microcode", "firmware", "cpu_model", "numaprobe_version"};
    std::stringstream list(overrides);
    for (std::string item; std::getline(list, item, ',');) {
      if (item.empty()) continue;
      const auto eq = item.find('=');
      const std::string field = item.substr(0, eq);
      if (eq == std::string::npos || kFields.count(field) == 0 || eq + 1 == item.size()) {
        return fmt::format(
            "{}: \"{}\": expected field=value with field one of kernel, microcode, firmware, cpu_model, "
            "numaprobe_version",
            kOverrides, item);
      }
      hooks.host_overrides[field] = item.substr(eq + 1);
    }
  }
  return "";
}

std::string ReadTestHooks(TestHooks& hooks, const std::vector<std::string>& scaled_kinds) {
  return ReadTestHooks(
      hooks, [](const char* name) { return static_cast<const char*>(std::getenv(name)); }, scaled_kinds);
}

void ApplyHostOverrides(const TestHooks& hooks, HostInfo& host) {
  for (const auto& [field, value] : hooks.host_overrides) {
    if (field == "kernel") host.kernel = value;
    if (field == "microcode") host.microcode = value;
    if (field == "firmware") host.firmware = value;
    if (field == "cpu_model") host.cpu_model = value;
  }
}

}  // namespace numaprobe::daemon
