// SPDX-License-Identifier: Apache-2.0
// Each host's worst drift, per kind with a baseline (and per op): the one
// number a drift alert compares with its threshold (computed by
// serve/results/derived.cc). The alert then names the drifted pairs by
// reading the one host's series while it fires.
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendWorstDrift(const Snapshot& s, const ProbeKind& kind, std::vector<MetricFamily>& out) {
  const bool higher_is_worse = kind.traits().regression == Regression::kHigherIsWorse;
  const std::string name = kind.traits().baseline_names.stem + "_worst_pair_drift_ratio";
  FamilyBuilder family(name,
                       "The worst node pair's recent median over its baseline: the " +
                           std::string(higher_is_worse ? "highest" : "lowest") +
                           " ratio of any pair, one series per op where the figures have one (in per-CPU mode each "
                           "side is first the median over the CPUs of the node). What the drift alerts compare with "
                           "their threshold; absent until a pair has both.",
                       MetricType::Gauge);
  for (const DriftRatio& drift : s.worst_drift) {
    if (drift.probe != kind.name()) continue;
    Labels labels;
    if (!drift.op.empty()) labels["op"] = drift.op;
    family.Add(labels, drift.ratio);
  }
  out.push_back(family.Build());
}

}  // namespace

void AppendDriftFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const ProbeKind* kind : ProbeTable()) {
    // A kind without a confirmation band has no drift alert
    // (results/derived.cc computes the ratios).
    const KindTraits& traits = kind->traits();
    if (traits.has_baseline && traits.confirmation_band.value_or(0) != 0) AppendWorstDrift(s, *kind, out);
  }
}

}  // namespace numaprobe::daemon
