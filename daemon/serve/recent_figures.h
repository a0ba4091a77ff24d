// The smoothed figure of each latency and bandwidth series: the median of its
// last kWindow successful figures, so that one or two outlier figures neither
// raise nor hide a drift (numaprobe_memory_*_recent_median_*). A series has no
// smoothed figure until it has kWindow figures since start or the last replan.
//
// The peer comparison reads a longer median, of the last kPeerWindow figures
// (Medians(kPeerWindow)): a host's ratio is compared with its peers' at a
// fixed threshold, and on hosts with 30-minute rounds the median of 5 is
// noisy for hours at a time (bench/peer_thresholds.py, docs/detection.md,
// "Choosing the peer alert's hold"). A confirmed rise still moves it at once: the suspicious
// figure and its kConfirmationRuns confirmations are 5 of its 9.
//
// It also decides when a figure is confirmed: a figure beyond its band around
// the baseline, while the series' median is inside it, is measured
// kConfirmationRuns more times next, each run a visit of its own after the
// budget's pause (round_tasks.h). The median of 5 then stands on the
// suspicious figure and its confirmations within minutes, where waiting for
// rounds would take hours on a big host (30-minute rounds: the drift alerts'
// promise, docs/detection.md, "Confirmation runs"); a healthy outlier is
// outvoted by its confirmations.
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

class RecentFigures {
 public:
  static constexpr std::size_t kWindow = 5;
  static constexpr std::size_t kPeerWindow = 9;
  static_assert(kWindow % 2 == 1 && kPeerWindow % 2 == 1, "a median of an odd count is one of the figures");
  // Enough fresh figures to decide the median alone.
  static constexpr int kConfirmationRuns = static_cast<int>(kWindow) - 1;
  static_assert(kConfirmationRuns + 1 > static_cast<int>(kPeerWindow / 2),
                "a confirmed figure and its confirmations must decide the peer median too");

  // A successful run's figure (the same value the baseline is fed with).
  void Add(const BaselineValue& figure);
  // Whether `figure`, before it is added, needs kConfirmationRuns more runs:
  // it lies beyond `band` (its kind's ProbeKind::ConfirmationBand: a signed
  // fraction, the sign saying which way is a regression) around `baseline`
  // (the series' baseline value; none: nothing to confirm against) while the
  // series' current median does not, or the series has none yet. A figure
  // better than its baseline is no regression.
  bool NeedsConfirmation(const BaselineValue& figure, std::optional<double> baseline, double band) const;
  // A new plan: figures from before may belong to pairs or settings that no
  // longer apply.
  void Clear() { series_.clear(); }
  // One value per series with `window` figures (at most kPeerWindow): the
  // median of its last `window`. Ordered by (probe, cpu_node, mem_node, cpu,
  // op).
  std::vector<BaselineValue> Medians(std::size_t window = kWindow) const;

 private:
  static std::string Key(const BaselineValue& figure);
  static std::optional<double> Median(const std::deque<double>& last, std::size_t window);
  std::map<std::string, std::pair<BaselineValue, std::deque<double>>> series_;
};

}  // namespace numaprobe::daemon
