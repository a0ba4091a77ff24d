// Per node pair (and op), the median over its CPUs of a kind's values: how
// the daemon's per-host summaries (metrics_drift.cc, metrics_peers.cc) reduce
// per-CPU recent medians and baselines, exactly as the rules'
// `quantile without(cpu) (0.5, ...)` would over the published series.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

// (cpu_node, mem_node, op). In per-CPU mode several CPUs of a node share one.
using PairKey = std::tuple<int, int, std::string>;

// The median as PromQL's quantile(0.5) computes it: the mean of the two
// middle values of an even count.
double PromQlMedian(std::vector<double> values);

// `kind`'s values per pair, each the median over the pair's CPUs.
std::map<PairKey, double> PairMedians(const std::vector<BaselineValue>& values, const ProbeKind& kind);

}  // namespace numaprobe::daemon
