// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/probe_runner.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace numaprobe::daemon {

bool IsPlacementOutcome(kernels::Outcome outcome) {
  return outcome == kernels::Outcome::kPlacementMismatch || outcome == kernels::Outcome::kPlacementUnverified;
}

std::vector<int> ProbeRunner::ChooseCpus(const MemoryPair& pair, int count) {
  CpuChoice choice = chooser_.Choose(pair, count);
  const int cpu = choice.cpus.front();
  if (!choice.why.empty()) {
    const auto [last, first_time] = last_cpu_of_node_.try_emplace(pair.cpu_node, cpu);
    const bool changed = first_time || std::exchange(last->second, cpu) != cpu;
    spdlog::log(changed ? spdlog::level::info : spdlog::level::debug,
                "node {}: probing from cpu {} instead of cpu {} ({})", pair.cpu_node, cpu, pair.cpu, choice.why);
  } else if (auto last = last_cpu_of_node_.find(pair.cpu_node); last != last_cpu_of_node_.end()) {
    if (std::exchange(last->second, cpu) != cpu) spdlog::info("node {}: probing from cpu {} again", pair.cpu_node, cpu);
  }
  return std::move(choice.cpus);
}

}  // namespace numaprobe::daemon
