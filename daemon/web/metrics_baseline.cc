// The baseline the figures are compared with, how much its rounds spread,
// which host facts changed since it was recorded, and the smoothed recent
// figures that drift rules divide by it.
#include <map>
#include <string>
#include <vector>

#include "daemon/probing/probe_table.h"
#include "daemon/serve/baseline.h"
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
    " recorded as the median of the per-round figures of the first complete probe rounds (baseline.rounds) after "
    "first start, numaprobe baseline accept or reset, or a topology or settings change; kernel, microcode, "
    "firmware, CPU model and numaprobe upgrades keep it (see numaprobe_host_change_timestamp_seconds).";
const std::string kSpreadHow = ": (max - min) / median of the per-round figures the baseline value was recorded from.";
const std::string kRecentHow =
    " over the series' last 5 successful figures; absent until the series has 5 figures since start or the last "
    "replan. Compare it with the baseline: one or two outlier figures move it not at all.";

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
  const BaselineSeries names = kind.BaselineNames();
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

}  // namespace

void AppendBaselineFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const Stage& stage : kStages) {
    for (const ProbeKind* kind : ProbeTable()) {
      if (kind->HasBaseline()) AppendStage(s, stage, *kind, out);
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

  FamilyBuilder info("numaprobe_baseline_info",
                     "The host fingerprint and why the current baseline exists (origin: first_start, restored, "
                     "accepted, reset, settings_changed, topology_changed, state_file_corrupt); always 1.",
                     MetricType::Gauge);
  info.Add({{"fingerprint", s.fingerprint}, {"origin", s.baseline_origin}}, 1);
  out.push_back(info.Build());
  FamilyBuilder complete("numaprobe_baseline_complete",
                         "1 once the baseline is recorded or restored, 0 while it is still being recorded.",
                         MetricType::Gauge);
  complete.Add({}, s.baseline_complete ? 1 : 0);
  out.push_back(complete.Build());
}

}  // namespace numaprobe::daemon
