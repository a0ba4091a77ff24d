// The smoothed figure of each latency and bandwidth series: the median of its
// last kWindow successful figures, so that one outlier figure neither raises
// nor hides a drift (numaprobe_memory_*_recent_median_*). A series has no
// smoothed figure until it has kWindow figures since start or the last replan.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

class RecentFigures {
 public:
  static constexpr std::size_t kWindow = 3;

  // A successful run's figure (the same value the baseline is fed with).
  void Add(const BaselineValue& figure);
  // A new plan: figures from before may belong to pairs or settings that no
  // longer apply.
  void Clear() { series_.clear(); }
  // One value per series with kWindow figures: their median. Ordered by
  // (probe, cpu_node, mem_node, cpu, op).
  std::vector<BaselineValue> Medians() const;

 private:
  std::map<std::string, std::pair<BaselineValue, std::deque<double>>> series_;
};

}  // namespace numaprobe::daemon
