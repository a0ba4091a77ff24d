// SPDX-License-Identifier: Apache-2.0
#include "kernels/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace numaprobe::kernels {
namespace {

// Median of `v` (reordered in place); the mean of the two middle values when
// the count is even, so {1, 2, 3, 4} gives 2.5 rather than an arbitrary side.
double MedianInPlace(std::vector<double>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace

std::optional<double> Median(std::span<const double> values) {
  if (values.empty()) return std::nullopt;
  std::vector<double> work(values.begin(), values.end());
  return MedianInPlace(work);
}

SampleStats Summarize(std::span<const double> samples) {
  SampleStats stats;
  if (samples.empty()) return stats;
  std::vector<double> work(samples.begin(), samples.end());
  const auto [min_it, max_it] = std::minmax_element(work.begin(), work.end());
  stats.min = *min_it;
  stats.max = *max_it;
  stats.n = work.size();
  stats.median = MedianInPlace(work);
  for (double& x : work) x = std::abs(x - stats.median);
  stats.mad = MedianInPlace(work);
  return stats;
}

}  // namespace numaprobe::kernels
