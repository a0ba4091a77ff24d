// SPDX-License-Identifier: Apache-2.0
// How many of a node's CPUs saturate its memory. The daemon's peak runs
// (kinds/peak_bandwidth.cc) stream from that many CPUs, not from every one:
// a node's memory saturates long before its last core joins (each core keeps
// ~10-20 loads in flight), and every CPU beyond only adds CPU time and harm
// to the node's workload.
//
// A search measures every usable CPU first (the reference, MLC's
// --bandwidth_matrix), then 1, 2, 4, ... CPUs, until it has measured the
// count after the first within kPeakShare of the best figure so far (the
// knee); that next count, or every CPU if there is none, is the one found.
// It runs once per series: the results model keeps the count with the
// series' baseline and forgets it with it (a changed topology or setting, an
// accept or reset), so it is found again exactly when the baseline records
// again (serve/results/series_history.h).
//
// Why past the knee: a count that only reaches the healthy peak's knee
// would show a lost channel in part. A node of 12 channels that loses one
// saturates at 91.7%; a count at 97% of the healthy peak then reads 1 -
// 0.917 / 0.97 = 5.5% lower, under the alert's 8%
// (peakBandwidthDropThreshold). Twice the knee's count saturates the healthy
// memory too, so the figure falls by the lost channel's whole share. 97%,
// not more: the trials of a search differ by a few percent on a quiet host.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kernels/bandwidth.h"

namespace numaprobe::daemon {

inline constexpr double kPeakShare = 0.97;

// One measurement of a search.
struct ThreadTrial {
  std::size_t threads = 0;
  double bytes_per_second = 0;
};

// The counts a search measures on a node of `cpus` usable CPUs, in order:
// all of them, then the powers of two below.
std::vector<std::size_t> SearchCounts(std::size_t cpus);

// After `trials` (in SearchCounts order, possibly stopped early): the found
// count, the newest trial's or every CPU; 0 while the search must go on.
std::size_t FoundThreads(const std::vector<ThreadTrial>& trials, std::size_t cpus);

// "1: 9.8, 2: 18.9, 4: 20.1 GB/s (every CPU, 8: 20.3)" for the log.
std::string DescribeTrials(const std::vector<ThreadTrial>& trials);

// A peak run's result (the record of every peak_bandwidth run): its figure,
// and the thread search it made, if it did.
struct PeakResult : kernels::BandwidthResult {
  std::vector<ThreadTrial> search;   // in SearchCounts order
  std::optional<int> found_threads;  // once the search ended
};

}  // namespace numaprobe::daemon
