// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/kinds/peak_thread_search.h"

#include <fmt/format.h>

#include <algorithm>

namespace numaprobe::daemon {

std::vector<std::size_t> SearchCounts(std::size_t cpus) {
  std::vector<std::size_t> counts;
  if (cpus == 0) return counts;
  counts.push_back(cpus);
  for (std::size_t n = 1; n < cpus; n *= 2) counts.push_back(n);
  return counts;
}

std::size_t FoundThreads(const std::vector<ThreadTrial>& trials, std::size_t cpus) {
  double best = 0;
  for (const ThreadTrial& t : trials) best = std::max(best, t.bytes_per_second);
  // Below the reference (trials[0]) the counts rise: the first within the
  // share is the knee, and the count after it is the one found.
  for (std::size_t i = 1; i < trials.size(); ++i) {
    if (trials[i].bytes_per_second < kPeakShare * best) continue;
    if (i + 1 < trials.size()) return trials[i + 1].threads;
    return trials[i].threads * 2 >= cpus ? cpus : 0;  // 0: measure the next count first
  }
  return !trials.empty() && trials.size() == SearchCounts(cpus).size() ? cpus : 0;
}

std::string DescribeTrials(const std::vector<ThreadTrial>& trials) {
  std::string text;
  for (std::size_t i = 1; i < trials.size(); ++i) {
    text += fmt::format("{}{}: {:.1f}", i > 1 ? ", " : "", trials[i].threads, trials[i].bytes_per_second / 1e9);
  }
  if (trials.empty()) return text;
  return fmt::format("{}{}GB/s (every CPU, {}: {:.1f})", text, text.empty() ? "" : " ", trials[0].threads,
                     trials[0].bytes_per_second / 1e9);
}

}  // namespace numaprobe::daemon
