// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/series_history.h"

#include <algorithm>
#include <cmath>

#include "kernels/stats.h"

namespace numaprobe::daemon {

bool SeriesHistory::Add(double figure, double unix_now, int figures_needed) {
  recent_.push_back(figure);
  recent_unix_.push_back(unix_now);
  while (recent_.size() > kPeerWindow) {
    recent_.pop_front();
    recent_unix_.pop_front();
  }
  if (armed_) return false;
  if (recording_since_unix_ < 0) recording_since_unix_ = unix_now;
  recording_.push_back(figure);
  if (static_cast<int>(recording_.size()) < FiguresNeeded(figures_needed)) return false;
  accept_figures_ = 0;
  const kernels::SampleStats stats = kernels::Summarize(recording_);
  armed_ = ArmedBaseline{stats.median, stats.median > 0 ? (stats.max - stats.min) / stats.median : 0, unix_now,
                         static_cast<int>(recording_.size())};
  recording_.clear();
  return true;
}

bool SeriesHistory::NeedsConfirmation(double figure, double band, Regression regression) const {
  if (!armed_ || armed_->value <= 0 || band == 0) return false;
  const double baseline = armed_->value;
  // How far a value is from the baseline in the direction of a regression.
  auto worse = [&](double value) {
    return regression == Regression::kHigherIsWorse ? value / baseline - 1 : 1 - value / baseline;
  };
  const double limit = std::abs(band);
  if (worse(figure) <= limit) return false;
  const std::optional<double> median = Median(kWindow);
  return !median || worse(*median) <= limit;
}

std::optional<double> SeriesHistory::Median(std::size_t window) const {
  if (window == 0 || recent_.size() < window) return std::nullopt;
  std::vector<double> sorted(recent_.end() - static_cast<std::ptrdiff_t>(window), recent_.end());
  std::sort(sorted.begin(), sorted.end());
  // Both windows are odd: the middle one.
  return sorted[sorted.size() / 2];
}

bool SeriesHistory::AcceptLevel(double change_unix, double unix_now) {
  std::vector<double> level;
  if (change_unix <= 0) {
    const std::size_t from = recent_.size() >= kWindow ? recent_.size() - kWindow : 0;
    level.assign(recent_.begin() + static_cast<std::ptrdiff_t>(from), recent_.end());
  } else {
    for (std::size_t i = 0; i < recent_.size(); ++i) {
      if (recent_unix_[i] >= change_unix) level.push_back(recent_[i]);
    }
  }
  if (level.size() < kWindow) {
    Rerecord(unix_now, /*forget_recent=*/false);
    recording_ = std::move(level);
    accept_figures_ = static_cast<int>(kWindow);
    return false;
  }
  const kernels::SampleStats stats = kernels::Summarize(level);
  armed_ = ArmedBaseline{stats.median, stats.median > 0 ? (stats.max - stats.min) / stats.median : 0, unix_now,
                         static_cast<int>(level.size())};
  recording_.clear();
  recording_since_unix_ = -1;
  accept_figures_ = 0;
  // The found threads stay: the measurement did not change, only its level.
  return true;
}

void SeriesHistory::Rerecord(double unix_now, bool forget_recent) {
  armed_.reset();
  found_threads_.reset();
  recording_.clear();
  recording_since_unix_ = unix_now;
  accept_figures_ = 0;
  if (forget_recent) ForgetRecent();
}

SeriesHistory SeriesHistory::Restored(std::deque<double> recent, std::vector<double> recording,
                                      double recording_since_unix, std::optional<ArmedBaseline> armed,
                                      std::optional<int> found_threads, std::deque<double> recent_unix,
                                      int accept_figures) {
  SeriesHistory history;
  history.found_threads_ = found_threads;
  while (recent_unix.size() > recent.size()) recent_unix.pop_front();
  while (recent_unix.size() < recent.size()) recent_unix.push_front(0);
  while (recent.size() > kPeerWindow) {
    recent.pop_front();
    recent_unix.pop_front();
  }
  history.recent_ = std::move(recent);
  history.recent_unix_ = std::move(recent_unix);
  history.armed_ = armed;
  if (!armed) {
    history.recording_ = std::move(recording);
    history.recording_since_unix_ = recording_since_unix;
    history.accept_figures_ = accept_figures;
  }
  return history;
}

}  // namespace numaprobe::daemon
