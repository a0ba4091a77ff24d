#include "daemon/serve/results/derived.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "daemon/probing/probe_table.h"

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
    const std::optional<double> band = kind->ConfirmationBand();
    if (!kind->HasBaseline() || !band || *band == 0) continue;
    const bool higher_is_worse = *band > 0;
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
    if (!kind->ComparedWithPeers() || !kind->HasBaseline()) continue;
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

double PromQlMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::map<PairKey, double> PairMedians(const std::vector<BaselineValue>& values, const ProbeKind& kind) {
  std::map<PairKey, std::vector<double>> by_pair;
  for (const BaselineValue& v : values) {
    if (v.probe == kind.name()) by_pair[{v.cpu_node, v.mem_node, v.op}].push_back(v.value);
  }
  std::map<PairKey, double> medians;
  for (auto& [key, list] : by_pair) medians[key] = PromQlMedian(std::move(list));
  return medians;
}

void Derive(const std::map<SeriesKey, SeriesHistory>& series, const std::set<SeriesKey>& planned, int figures_needed,
            const RefreshOf& refresh, Snapshot& s) {
  s.baseline.clear();
  s.baseline_spread.clear();
  s.recent_medians.clear();
  s.peer_medians.clear();
  BaselineProgress progress;
  double recorded = 0, needed = 0;
  for (const SeriesKey& key : planned) {
    const auto it = series.find(key);
    if (it == series.end() || KindNamed(key.probe) == nullptr) continue;
    const SeriesHistory& history = it->second;
    if (const auto& armed = history.armed()) {
      ++progress.armed;
      s.baseline.push_back({key, armed->value});
      s.baseline_spread.push_back({key, armed->spread});
    } else {
      ++progress.recording;
      recorded += static_cast<double>(std::min<std::size_t>(history.recording().size(), figures_needed));
      needed += figures_needed;
      if (history.recording_since_unix() >= 0) {
        const double since = history.recording_since_unix();
        progress.recording_since = progress.recording_since ? std::min(*progress.recording_since, since) : since;
        const double expected = since + figures_needed * refresh.Of(key);
        progress.expected_armed = progress.expected_armed ? std::max(*progress.expected_armed, expected) : expected;
      }
    }
    if (const auto median = history.Median(SeriesHistory::kWindow)) s.recent_medians.push_back({key, *median});
    if (const auto median = history.Median(SeriesHistory::kPeerWindow)) s.peer_medians.push_back({key, *median});
  }
  progress.recorded_ratio = needed > 0 ? recorded / needed : 1;
  s.baseline_progress = progress;
  s.baseline_complete = progress.recording == 0 && progress.armed > 0;
  s.worst_drift = WorstDrift(s.baseline, s.recent_medians);
  s.remote_local_ratios = RemoteLocalRatios(s.peer_medians);
}

}  // namespace numaprobe::daemon
