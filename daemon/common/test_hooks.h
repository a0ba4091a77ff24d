// SPDX-License-Identifier: Apache-2.0
// Test-only hooks, read from the environment, for integration tests that need
// a changed host (a new kernel, microcode, ...) or regressed figures without
// changing the machine:
//   NUMAPROBE_TEST_HOST_OVERRIDES="kernel=6.6.13-amd64,microcode=0x2"
//   NUMAPROBE_TEST_SCALE_<KIND>=1.15: multiplies the figures of a kind that
//   allows it (the caller passes those kinds' names; the variable is the name
//   in upper case)
//   NUMAPROBE_TEST_TASK_COSTS=FILE: the scheduler's task-cost estimate is
//   read from FILE (serve/task_cost_estimate.h) and never learnt, so the
//   rotation a test asserts does not depend on how fast the machine runs
//   NUMAPROBE_TEST_CONFIRMATIONS=off: a figure beyond its band earns no
//   confirmation runs (serve/results/series_history.h), so every round runs its
//   schedule and nothing more, and a series has a figure per successful run
//   of its pair: what a test counts in rounds does not depend on how noisy
//   the machine's figures are (an emulator's are, at random)
// They are honoured only together with NUMAPROBE_TEST_MODE=1; set without it
// they are an error (`serve` refuses to start), so a production host cannot
// run with faked figures by accident.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/host_info.h"

namespace numaprobe::daemon {

struct TestHooks {
  // field -> value: kernel, microcode, firmware, cpu_model, numaprobe_version.
  std::map<std::string, std::string> host_overrides;
  // (kind name, factor) for every scalable kind, in the caller's order; 1: unscaled.
  std::vector<std::pair<std::string, double>> scales;
  bool fault_injection_active() const {
    for (const auto& [kind, factor] : scales) {
      if (factor != 1) return true;
    }
    return false;
  }
  // "latency x1.15, bandwidth x1" (`what` after each name: " figures" or "").
  std::string DescribeScales(std::string_view what) const;
  std::string task_costs_file;  // "" : costs learnt from the runs
  bool confirmations_off = false;
  bool active() const {
    return fault_injection_active() || !host_overrides.empty() || !task_costs_file.empty() || confirmations_off;
  }
};

using GetEnv = std::function<const char*(const char*)>;

// Fills `hooks` from the environment; returns "" or an error naming the
// variable (a hook without NUMAPROBE_TEST_MODE=1, a malformed value).
// `scaled_kinds`: the kinds a NUMAPROBE_TEST_SCALE_<KIND> variable may scale.
std::string ReadTestHooks(TestHooks& hooks, const GetEnv& getenv, const std::vector<std::string>& scaled_kinds);
std::string ReadTestHooks(TestHooks& hooks, const std::vector<std::string>& scaled_kinds);

// Applies the overrides of the HostInfo fields (kernel, microcode, firmware, cpu_model).
void ApplyHostOverrides(const TestHooks& hooks, HostInfo& host);

}  // namespace numaprobe::daemon
