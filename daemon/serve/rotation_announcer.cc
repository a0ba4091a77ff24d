// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/rotation_announcer.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

namespace numaprobe::daemon {

void RotationAnnouncer::Announce(const Rotation& rotation, int rounds, const TaskCostEstimate& costs,
                                 double round_budget_cpu_seconds) {
  const int before = announced_rounds_;
  if (rounds == before) return;
  announced_rounds_ = rounds;
  const std::optional<double> full = FullRoundCpuSeconds(rotation, costs);
  const std::string cost = full ? fmt::format("{:.2f} CPU-s", *full) : std::string("not known yet");
  const double allowed = kRotateAbove * round_budget_cpu_seconds;
  if (rounds > 1) {
    spdlog::info(
        "schedule: {} tasks; {} every round (one pair per probe kind and node distance), {} in rotation over {} "
        "rounds: {} (a full round costs {}, more than {} x budget x interval = {:.2f} CPU-s)",
        rotation.tasks.size(), rotation.every_round.size(), rotation.rotated_tasks(), rounds,
        before > 1 ? fmt::format("the number of rounds changed from {}", before) : std::string("starting to rotate"),
        cost, kRotateAbove, allowed);
  } else if (before > 1) {
    spdlog::info(
        "schedule: {} tasks, all of them every round: rotation stopped (a full round costs {}, {} {} x "
        "budget x interval = {:.2f} CPU-s)",
        rotation.tasks.size(), cost, full ? "at most" : "so it cannot be compared with", kRotateAbove, allowed);
  }
}

}  // namespace numaprobe::daemon
