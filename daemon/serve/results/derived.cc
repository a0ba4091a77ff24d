// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/derived.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "daemon/probing/probe_table.h"
#include "kernels/stats.h"

namespace numaprobe::daemon {
namespace {

const ProbeKind* KindNamed(const std::string& name) {
  for (const ProbeKind* kind : ProbeTable()) {
    if (kind->name() == name) return kind;
  }
  return nullptr;
}

}  // namespace

std::vector<DriftRatio> WorstDrift(const std::vector<BaselineValue>& baseline_values,
                                   const std::vector<BaselineValue>& recent_medians) {
  std::vector<DriftRatio> worst;
  for (const ProbeKind* kind : ProbeTable()) {
    const KindTraits& traits = kind->traits();
    if (!traits.has_baseline || traits.confirmation_band.value_or(0) == 0) continue;
    const bool higher_is_worse = traits.regression == Regression::kHigherIsWorse;
    const std::map<PairKey, double> baseline = PairMedians(baseline_values, *kind);
    std::map<std::string, double> by_op;
    for (const auto& [key, recent] : PairMedians(recent_medians, *kind)) {
      const auto base = baseline.find(key);
      if (base == baseline.end() || base->second <= 0) continue;
      const double ratio = recent / base->second;
      const auto [it, inserted] = by_op.try_emplace(std::get<2>(key), ratio);
      if (!inserted) it->second = higher_is_worse ? std::max(it->second, ratio) : std::min(it->second, ratio);
    }
    for (const auto& [op, ratio] : by_op) worst.push_back({std::string(kind->name()), op, ratio});
  }
  return worst;
}

// Remote pairs only: a local pair's ratio is 1 on every host and tells the
// peers nothing.
std::vector<PairRatio> RemoteLocalRatios(const std::vector<BaselineValue>& peer_medians) {
  std::vector<PairRatio> ratios;
  for (const ProbeKind* kind : ProbeTable()) {
    if (!kind->traits().compared_with_peers || !kind->traits().has_baseline) continue;
    const std::map<PairKey, double> medians = PairMedians(peer_medians, *kind);
    for (const auto& [key, value] : medians) {
      const auto& [cpu_node, mem_node, op] = key;
      if (cpu_node == mem_node) continue;
      const auto local = medians.find({cpu_node, cpu_node, op});
      if (local == medians.end() || local->second <= 0) continue;
      ratios.push_back({std::string(kind->name()), cpu_node, mem_node, op, value / local->second});
    }
  }
  return ratios;
}

std::map<PairKey, double> PairMedians(const std::vector<BaselineValue>& values, const ProbeKind& kind) {
  // Sorted by pair, then grouped: one allocation for all of them instead of a
  // list per pair (this runs after every run that lands).
  std::vector<const BaselineValue*> of;
  for (const BaselineValue& v : values) {
    if (v.probe == kind.name()) of.push_back(&v);
  }
  std::sort(of.begin(), of.end(), [](const BaselineValue* a, const BaselineValue* b) {
    return std::tie(a->cpu_node, a->mem_node, a->op) < std::tie(b->cpu_node, b->mem_node, b->op);
  });
  std::map<PairKey, double> medians;
  std::vector<double> group;
  for (std::size_t i = 0; i < of.size();) {
    std::size_t j = i;
    group.clear();
    for (; j < of.size() && of[j]->cpu_node == of[i]->cpu_node && of[j]->mem_node == of[i]->mem_node &&
           of[j]->op == of[i]->op;
         ++j) {
      group.push_back(of[j]->value);
    }
    // kernels::Median's even-count rule is PromQL's quantile(0.5).
    medians.emplace_hint(medians.end(), PairKey{of[i]->cpu_node, of[i]->mem_node, of[i]->op}, *kernels::Median(group));
    i = j;
  }
  return medians;
}

DerivedFigures::Entry DerivedFigures::Of(const SeriesHistory& history) {
  Entry entry;
  if (const auto& armed = history.armed()) {
    entry.baseline = armed->value;
    entry.spread = armed->spread;
  } else {
    entry.recorded = history.recording().size();
    entry.since = history.recording_since_unix();
    entry.accept_figures = history.accept_figures();
  }
  entry.recent = history.Median(SeriesHistory::kWindow);
  entry.peer = history.Median(SeriesHistory::kPeerWindow);
  return entry;
}

void DerivedFigures::Rebuild(const std::map<SeriesKey, SeriesHistory>& series, const std::set<SeriesKey>& planned) {
  entries_.clear();
  for (const SeriesKey& key : planned) {
    const auto it = series.find(key);
    if (it != series.end() && KindNamed(key.probe) != nullptr) entries_.emplace(key, Of(it->second));
  }
}

void DerivedFigures::Update(const SeriesKey& key, const SeriesHistory& history) {
  const auto it = entries_.find(key);
  if (it != entries_.end()) it->second = Of(history);
}

void DerivedFigures::Fill(int figures_needed, const RefreshOf& refresh, Snapshot& s) const {
  s.baseline.clear();
  s.baseline_spread.clear();
  s.recent_medians.clear();
  s.peer_medians.clear();
  BaselineProgress progress;
  double recorded = 0, needed = 0;
  // In SeriesKey order, which is the order the metrics list series in.
  for (const auto& [key, entry] : entries_) {
    if (entry.baseline) {
      ++progress.armed;
      s.baseline.push_back({key, *entry.baseline});
      s.baseline_spread.push_back({key, *entry.spread});
    } else {
      ++progress.recording;
      const int wanted = entry.accept_figures > 0 ? std::min(entry.accept_figures, figures_needed) : figures_needed;
      recorded += static_cast<double>(std::min<std::size_t>(entry.recorded, static_cast<std::size_t>(wanted)));
      needed += wanted;
      if (entry.since >= 0) {
        progress.recording_since =
            progress.recording_since ? std::min(*progress.recording_since, entry.since) : entry.since;
        const double expected = entry.since + wanted * refresh.Of(key);
        progress.expected_armed = progress.expected_armed ? std::max(*progress.expected_armed, expected) : expected;
      }
    }
    if (entry.recent) s.recent_medians.push_back({key, *entry.recent});
    if (entry.peer) s.peer_medians.push_back({key, *entry.peer});
  }
  progress.recorded_ratio = needed > 0 ? recorded / needed : 1;
  s.baseline_progress = progress;
  s.baseline_complete = progress.recording == 0 && progress.armed > 0;
  s.worst_drift = WorstDrift(s.baseline, s.recent_medians);
  s.remote_local_ratios = RemoteLocalRatios(s.peer_medians);
}

}  // namespace numaprobe::daemon
