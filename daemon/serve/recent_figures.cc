#include "daemon/serve/recent_figures.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace numaprobe::daemon {

void RecentFigures::Add(const BaselineValue& figure) {
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}", figure.probe, figure.cpu, figure.cpu_node, figure.mem_node, figure.op);
  auto [it, inserted] = series_.try_emplace(key, figure, std::deque<double>{});
  std::deque<double>& last = it->second.second;
  last.push_back(figure.value);
  while (last.size() > kWindow) last.pop_front();
}

std::vector<BaselineValue> RecentFigures::Medians() const {
  std::vector<BaselineValue> medians;
  for (const auto& [key, entry] : series_) {
    const auto& [labels, last] = entry;
    if (last.size() < kWindow) continue;
    std::vector<double> sorted(last.begin(), last.end());
    std::sort(sorted.begin(), sorted.end());
    BaselineValue median = labels;
    // kWindow is odd: the middle one.
    median.value = sorted[sorted.size() / 2];
    medians.push_back(std::move(median));
  }
  std::sort(medians.begin(), medians.end(), [](const BaselineValue& a, const BaselineValue& b) {
    return std::tie(a.probe, a.cpu_node, a.mem_node, a.cpu, a.op) <
           std::tie(b.probe, b.cpu_node, b.mem_node, b.cpu, b.op);
  });
  return medians;
}

}  // namespace numaprobe::daemon
