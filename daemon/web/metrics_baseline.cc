// SPDX-License-Identifier: Apache-2.0
// The baseline the figures are compared with, how much its rounds spread,
// which host facts changed since it was recorded, and the smoothed recent
// figures that drift rules divide by it.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/serve/results/host_record.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// Which per-series values a family holds and how its name and help are made
// from the kind's figure family (BaselineSeries).
struct Stage {
  const std::vector<BaselineValue> Snapshot::*values;
  bool as_figure;  // labelled exactly as the figure of the same series
  std::string (*name)(const BaselineSeries&);
  std::string (*help)(const BaselineSeries&);
};

std::string Figure(const BaselineSeries& b) { return b.stem + "_" + b.unit; }
std::string Baseline(const BaselineSeries& b) { return b.stem + "_baseline_" + b.unit; }

const std::string kHow =
    " per series: the median of the series' first baseline.rounds successful figures after first start, numaprobe "
    "baseline accept or reset, a topology change or a change of the kind's settings, or after the series joined the "
    "plan; absent while the series still records (numaprobe_baseline_series). Kernel, microcode, firmware, CPU "
    "model and numaprobe upgrades keep it (see numaprobe_host_change_timestamp_seconds); kept across restarts.";
const std::string kSpreadHow = ": (max - min) / median of the figures the baseline value was recorded from.";
const std::string kRecentHow =
    " over the series' last 5 successful figures, kept across restarts; absent until the series has 5. Compare it "
    "with the baseline: one or two outlier figures move it not at all.";

// In this order, each for every kind with a baseline in probe-table order.
const Stage kStages[] = {
    {&Snapshot::baseline, false, Baseline,
     [](const BaselineSeries& b) { return "Baseline of " + Figure(b) + "," + kHow; }},
    {&Snapshot::baseline_spread, false, [](const BaselineSeries& b) { return b.stem + "_baseline_spread_ratio"; },
     [](const BaselineSeries& b) { return "Spread of " + Baseline(b) + kSpreadHow; }},
    {&Snapshot::recent_medians, true, [](const BaselineSeries& b) { return b.stem + "_recent_median_" + b.unit; },
     [](const BaselineSeries& b) { return "Median of " + Figure(b) + kRecentHow; }},
};

void AppendStage(const Snapshot& s, const Stage& stage, const ProbeKind& kind, std::vector<MetricFamily>& out) {
  const BaselineSeries& names = kind.traits().baseline_names;
  FamilyBuilder family(stage.name(names), stage.help(names), MetricType::Gauge);
  const std::vector<TimedRecord> latest = stage.as_figure ? s.FiguresOf(kind) : std::vector<TimedRecord>{};
  for (const BaselineValue& v : s.*stage.values) {
    if (v.probe != kind.name()) continue;
    Labels labels{{"cpu_node", Id(v.cpu_node)}, {"mem_node", Id(v.mem_node)}};
    if (v.cpu >= 0) labels["cpu"] = Id(v.cpu);
    if (!v.op.empty()) labels["op"] = v.op;
    kind.AddBaselineLabels(v, latest, s.figure_context, stage.as_figure, labels);
    family.Add(labels, v.value);
  }
  out.push_back(family.Build());
}

// How far the baseline is: the drift alerts of a series arm when its
// baseline does. An alert fires when recording takes far longer than the
// schedule predicts (grafana/rules).
void AppendBaselineProgress(const BaselineProgress& p, std::vector<MetricFamily>& out) {
  FamilyBuilder series("numaprobe_baseline_series",
                       "Planned series by the state of their baseline: armed (drift is checked against it) or "
                       "recording (collecting its first baseline.rounds figures).",
                       MetricType::Gauge);
  series.Add({{"state", "armed"}}, p.armed);
  series.Add({{"state", "recording"}}, p.recording);
  out.push_back(series.Build());
  FamilyBuilder ratio("numaprobe_baseline_recording_progress_ratio",
                      "Figures recorded over figures needed (baseline.rounds each), summed over the planned series "
                      "still recording their baseline; 1 when none is.",
                      MetricType::Gauge);
  ratio.Add({}, p.recorded_ratio);
  out.push_back(ratio.Build());
  FamilyBuilder since("numaprobe_baseline_recording_since_timestamp_seconds",
                      "Unix time the longest-recording planned series began recording its baseline; absent when "
                      "every planned series is armed.",
                      MetricType::Gauge);
  if (p.recording_since) since.Add({}, *p.recording_since);
  out.push_back(since.Build());
  FamilyBuilder expected("numaprobe_baseline_expected_armed_timestamp_seconds",
                         "Unix time by which the current schedule expects every planned series armed: each recording "
                         "series' start plus baseline.rounds of its refresh intervals, the latest of them; absent "
                         "when every planned series is armed.",
                         MetricType::Gauge);
  if (p.expected_armed) expected.Add({}, *p.expected_armed);
  out.push_back(expected.Build());
}

}  // namespace

void AppendBaselineFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const Stage& stage : kStages) {
    for (const ProbeKind* kind : ProbeTable()) {
      if (kind->traits().has_baseline) AppendStage(s, stage, *kind, out);
    }
  }

  FamilyBuilder changes("numaprobe_host_change_timestamp_seconds",
                        "Unix time the daemon first saw the last change of a host fact (field: kernel, microcode, "
                        "firmware, numaprobe_version, cpu_model, page_size, hypervisor, nodes_per_package, or a "
                        "runtime fact of numaprobe_host_fact_info, nodeN.mem_total_bytes, nodeN.hugepages_SIZE, "
                        "memory_errors_since_baseline) from before to after since the baseline was recorded; the "
                        "baseline stays the reference. One series per field at most, of the last " +
                            std::to_string(kMaxHostChanges) +
                            " changes kept. Cleared by numaprobe baseline accept or reset.",
                        MetricType::Gauge);
  // The last change of each field: a setting flipped back and forth is one
  // series, not one per flip.
  std::map<std::string, const HostChange*> last;
  for (const HostChange& c : s.host_changes) last[c.field] = &c;
  for (const auto& [field, c] : last) {
    changes.Add({{"field", c->field}, {"before", c->before}, {"after", c->after}}, c->unix_seconds);
  }
  out.push_back(changes.Build());

  // The newest of those changes as one label, for grouping a fleet rollout's
  // drift alerts in Alertmanager by what changed (grafana/alertmanager.yml):
  // every field first seen changed at that moment, so a kernel and microcode
  // update seen at one boot is one value on every host that took it. An
  // older, unrelated change on one host does not split it from the others.
  FamilyBuilder newest("numaprobe_host_last_change_timestamp_seconds",
                       "Unix time the daemon first saw the newest host change since the baseline was recorded; "
                       "change: every field that changed then, each as the drift alerts' descriptions write it "
                       "(field, old value, arrow, new value), sorted by field and joined by commas. One series at "
                       "most; what Alertmanager groups a fleet rollout's drift "
                       "alerts by. Cleared by numaprobe baseline accept or reset.",
                       MetricType::Gauge);
  if (!last.empty()) {
    double newest_seconds = 0;
    for (const auto& [field, c] : last) newest_seconds = std::max(newest_seconds, c->unix_seconds);
    std::string change;
    for (const auto& [field, c] : last) {
      if (c->unix_seconds != newest_seconds) continue;
      if (!change.empty()) change += ", ";
      change += c->field + " " + c->before + " -> " + c->after;
    }
    newest.Add({{"change", change}}, newest_seconds);
  }
  out.push_back(newest.Build());

  FamilyBuilder info("numaprobe_baseline_info",
                     "The host fingerprint and why the current baseline exists (origin: first_start, restored, "
                     "accepted, reset, settings_changed, topology_changed, state_file_corrupt, "
                     "state_file_unreadable); always 1. topology_changed stays, across restarts, until numaprobe "
                     "baseline accept or reset.",
                     MetricType::Gauge);
  info.Add({{"fingerprint", s.fingerprint}, {"origin", s.baseline_origin}}, 1);
  out.push_back(info.Build());
  FamilyBuilder complete("numaprobe_baseline_complete",
                         "1 once every planned series has an armed baseline (recorded or restored), 0 while some "
                         "series still records (numaprobe_baseline_series).",
                         MetricType::Gauge);
  complete.Add({}, s.baseline_complete ? 1 : 0);
  out.push_back(complete.Build());
  AppendBaselineProgress(s.baseline_progress, out);
}

}  // namespace numaprobe::daemon
