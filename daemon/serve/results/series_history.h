// SPDX-License-Identifier: Apache-2.0
// What the daemon has learnt of one series: its recent figures, and its
// baseline, being recorded or armed. Each series learns from its own figures
// only: a failed run of another series costs it nothing, and a series that
// joins the plan later records a baseline of its own.
//
// Recent figures: the last kPeerWindow successful figures. Their median of
// the last kWindow is the smoothed figure the drift rules compare with the
// baseline (one or two outliers move it not at all); the median of all
// kPeerWindow is what the peer comparison reads (on hosts with 30-minute
// rounds the median of 5 is noisy for hours at a time: docs/detection.md,
// "Choosing the peer alert's hold").
//
// Baseline: recording collects figures until it has as many as
// `baseline.rounds` asks; then it arms with their median (and their spread,
// (max - min) / median). An armed baseline stays until the operator accepts or
// resets it or the series' settings or the host's topology change.
//
// Accepting the current level (an operator's accept, a planned change):
// the figures measured since the change are that level. A series with at
// least kWindow of them in its recent window arms at once with their median,
// so detection stays on through a rollout; one with fewer keeps them as the
// start of its recording and arms at kWindow figures (not baseline.rounds):
// a planned change seen this moment disarms its series for kWindow refreshes,
// not for a whole baseline.
//
// Found threads: the thread count the kind's search found for this series
// (ProbeKind::FoundThreadsOf: peak bandwidth), kept with the baseline and
// forgotten with it, so that the search runs again exactly when the baseline
// records again.
//
// Confirmation: a figure beyond its band around the armed baseline, while the
// series' median is inside it (or the series has none yet), is measured
// kConfirmationRuns more times next (round_tasks.h, QueueConfirmations); the
// median of kWindow then stands on the suspicious figure and its
// confirmations within minutes.
//
// Thread safety: a value, owned by the ResultModel.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "daemon/probing/kind_traits.h"

namespace numaprobe::daemon {

struct ArmedBaseline {
  double value = 0;       // the median of the figures it was recorded from
  double spread = 0;      // their (max - min) / median
  double armed_unix = 0;  // when it armed (Unix seconds)
  int figures = 0;        // how many it was recorded from
};

class SeriesHistory {
 public:
  static constexpr std::size_t kWindow = 5;
  static constexpr std::size_t kPeerWindow = 9;
  static_assert(kWindow % 2 == 1 && kPeerWindow % 2 == 1, "a median of an odd count is one of the figures");
  // Enough fresh figures to decide the median alone.
  static constexpr int kConfirmationRuns = static_cast<int>(kWindow) - 1;
  static_assert(kConfirmationRuns + 1 > static_cast<int>(kPeerWindow / 2),
                "a confirmed figure and its confirmations must decide the peer median too");

  // A successful run's figure at `unix_now`: joins the recent figures and, while
  // recording, the baseline's; true when this figure armed the baseline
  // (`figures_needed` reached).
  bool Add(double figure, double unix_now, int figures_needed);

  // Whether `figure`, before it is added, needs kConfirmationRuns more runs:
  // more than `band` (KindTraits::confirmation_band, a positive fraction)
  // from the armed baseline in the direction of `regression` while the
  // median of kWindow is not, or there is none yet. Never while recording.
  bool NeedsConfirmation(double figure, double band, Regression regression) const;

  // The median of the last `window` recent figures; none until there are as many.
  std::optional<double> Median(std::size_t window) const;

  // Accepts the level measured since `change_unix` (Unix seconds; 0 when the
  // change has no time: then the last kWindow figures, the ones the drift
  // rules' median reads): arms at `unix_now` with the median and spread of
  // the recent figures since then and returns true when there are at least
  // kWindow of them; otherwise records anew from those figures, to arm at
  // kWindow (FiguresNeeded), and returns false.
  // Figures restored from a state file without times (before this field)
  // count as older than any change.
  bool AcceptLevel(double change_unix, double unix_now);

  // Forgets the baseline (and the found threads) and records anew from
  // `unix_now` (reset, a changed topology or setting). The recent figures
  // stay unless `forget_recent` (figures measured differently are not
  // comparable).
  void Rerecord(double unix_now, bool forget_recent);
  // Forgets the recent figures (a series that left the plan: they would be
  // stale when it comes back).
  void ForgetRecent() {
    recent_.clear();
    recent_unix_.clear();
  }

  void SetFoundThreads(int threads) { found_threads_ = threads; }
  std::optional<int> found_threads() const { return found_threads_; }

  // How many figures the recording under way needs to arm: `configured`
  // (baseline.rounds), or fewer after an accept (AcceptLevel).
  int FiguresNeeded(int configured) const {
    return accept_figures_ > 0 && accept_figures_ < configured ? accept_figures_ : configured;
  }
  int accept_figures() const { return accept_figures_; }

  const std::optional<ArmedBaseline>& armed() const { return armed_; }
  const std::deque<double>& recent() const { return recent_; }
  // When each recent figure landed (Unix seconds; 0: not known).
  const std::deque<double>& recent_unix() const { return recent_unix_; }
  const std::vector<double>& recording() const { return recording_; }
  double recording_since_unix() const { return recording_since_unix_; }

  // The state file's view (results/state_file.h): restores exactly what was
  // saved. `recent_unix` shorter than `recent` (a file from before it) is
  // filled with 0 (not known) at the front.
  static SeriesHistory Restored(std::deque<double> recent, std::vector<double> recording, double recording_since_unix,
                                std::optional<ArmedBaseline> armed, std::optional<int> found_threads = std::nullopt,
                                std::deque<double> recent_unix = {}, int accept_figures = 0);

 private:
  std::deque<double> recent_;         // oldest first, at most kPeerWindow
  std::deque<double> recent_unix_;    // when each of recent_ landed, same length
  std::vector<double> recording_;     // the baseline's figures so far (empty once armed)
  double recording_since_unix_ = -1;  // when recording started; -1 at the first figure
  std::optional<ArmedBaseline> armed_;
  std::optional<int> found_threads_;
  int accept_figures_ = 0;  // > 0: this recording follows an accept and arms at this many
};

}  // namespace numaprobe::daemon
