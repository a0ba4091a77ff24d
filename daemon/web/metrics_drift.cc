// Each host's worst drift, per kind with a baseline (and per op): the one
// number a drift alert compares with its threshold. The rules could compute
// it from the recent medians and baselines, but that reads every pair's
// series of every host once a minute (2 x 64 latency and 2 x 192 bandwidth
// series a host on 8 nodes: 7-9 s of rule evaluation a minute at 1,000 hosts,
// docs/detection.md); the daemon has both at hand. The alert then names the
// drifted pairs by reading the one host's series while it fires.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "daemon/web/pair_medians.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendWorstDrift(const Snapshot& s, const ProbeKind& kind, double regression_sign,
                      std::vector<MetricFamily>& out) {
  const bool higher_is_worse = regression_sign > 0;
  const std::string name = kind.BaselineNames().stem + "_worst_pair_drift_ratio";
  FamilyBuilder family(name,
                       "The worst node pair's recent median over its baseline: the " +
                           std::string(higher_is_worse ? "highest" : "lowest") +
                           " ratio of any pair, one series per op where the figures have one (in per-CPU mode each "
                           "side is first the median over the CPUs of the node). What the drift alerts compare with "
                           "their threshold; absent until a pair has both.",
                       MetricType::Gauge);
  const std::map<PairKey, double> baseline = PairMedians(s.baseline, kind);
  std::map<std::string, double> worst;  // op -> ratio
  for (const auto& [key, recent] : PairMedians(s.recent_medians, kind)) {
    const auto base = baseline.find(key);
    if (base == baseline.end() || base->second <= 0) continue;
    const double ratio = recent / base->second;
    const auto [it, inserted] = worst.try_emplace(std::get<2>(key), ratio);
    if (!inserted) it->second = higher_is_worse ? std::max(it->second, ratio) : std::min(it->second, ratio);
  }
  for (const auto& [op, ratio] : worst) {
    Labels labels;
    if (!op.empty()) labels["op"] = op;
    family.Add(labels, ratio);
  }
  out.push_back(family.Build());
}

}  // namespace

void AppendDriftFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const ProbeKind* kind : ProbeTable()) {
    // The confirmation band's sign is the direction of a regression: a kind
    // without one has no drift alert.
    const std::optional<double> band = kind->ConfirmationBand();
    if (kind->HasBaseline() && band.has_value() && *band != 0) AppendWorstDrift(s, *kind, *band, out);
  }
}

}  // namespace numaprobe::daemon
