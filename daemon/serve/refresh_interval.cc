// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/refresh_interval.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace numaprobe::daemon {

RefreshOf RefreshAfterRound(const Rotation& rotation, int rounds, double round_seconds, const Config& config,
                            std::map<std::string, double, std::less<>> own_schedule_seconds) {
  const double every_round = std::max(std::chrono::duration<double>(config.schedule.interval).count(), round_seconds);
  RefreshOf refresh{every_round, rounds * every_round, {}, std::move(own_schedule_seconds)};
  for (std::size_t i : rotation.every_round) {
    const Task& task = rotation.tasks[i];
    if (task.kind->traits().has_baseline)
      refresh.every_round.insert(task.kind->SeriesOf(task.target, config.targets.per_cpu));
  }
  return refresh;
}

}  // namespace numaprobe::daemon
