#include "daemon/serve/recent_figures.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

namespace numaprobe::daemon {

std::string RecentFigures::Key(const BaselineValue& figure) {
  return fmt::format("{}|{}|{}|{}|{}", figure.probe, figure.cpu, figure.cpu_node, figure.mem_node, figure.op);
}

std::optional<double> RecentFigures::Median(const std::deque<double>& last, std::size_t window) {
  if (last.size() < window) return std::nullopt;
  std::vector<double> sorted(last.end() - static_cast<std::ptrdiff_t>(window), last.end());
  std::sort(sorted.begin(), sorted.end());
  // Both windows are odd (recent_figures.h): the middle one.
  return sorted[sorted.size() / 2];
}

void RecentFigures::Add(const BaselineValue& figure) {
  auto [it, inserted] = series_.try_emplace(Key(figure), figure, std::deque<double>{});
  std::deque<double>& last = it->second.second;
  last.push_back(figure.value);
  while (last.size() > std::max(kWindow, kPeerWindow)) last.pop_front();
}

bool RecentFigures::NeedsConfirmation(const BaselineValue& figure, std::optional<double> baseline, double band) const {
  if (!baseline || *baseline <= 0 || band == 0) return false;
  // How far a value is from the baseline in the direction of a regression.
  auto worse = [&](double value) { return band > 0 ? value / *baseline - 1 : 1 - value / *baseline; };
  const double limit = std::abs(band);
  if (worse(figure.value) <= limit) return false;
  const auto it = series_.find(Key(figure));
  const std::optional<double> median = it == series_.end() ? std::nullopt : Median(it->second.second, kWindow);
  return !median || worse(*median) <= limit;
}

std::vector<BaselineValue> RecentFigures::Medians(std::size_t window) const {
  std::vector<BaselineValue> medians;
  for (const auto& [key, entry] : series_) {
    const auto& [labels, last] = entry;
    const std::optional<double> median = Median(last, window);
    if (!median) continue;
    BaselineValue value = labels;
    value.value = *median;
    medians.push_back(std::move(value));
  }
  std::sort(medians.begin(), medians.end(), [](const BaselineValue& a, const BaselineValue& b) {
    return std::tie(a.probe, a.cpu_node, a.mem_node, a.cpu, a.op) <
           std::tie(b.probe, b.cpu_node, b.mem_node, b.cpu, b.op);
  });
  return medians;
}

}  // namespace numaprobe::daemon
