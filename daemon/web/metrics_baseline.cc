// The baseline the figures are compared with, how much its rounds spread,
// which host facts changed since it was recorded, and the smoothed recent
// figures that drift rules divide by it.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/baseline.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "kernels/bandwidth.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using prometheus::MetricFamily;
using prometheus::MetricType;

Labels PairLabels(const BaselineValue& v) {
  Labels labels{{"cpu_node", Id(v.cpu_node)}, {"mem_node", Id(v.mem_node)}};
  if (v.cpu >= 0) labels["cpu"] = Id(v.cpu);
  if (!v.op.empty()) labels["op"] = v.op;
  return labels;
}

// The threads label of a bandwidth value: as on the published figure of the
// same series (the threads that ran), else the configured count; none when one
// thread is configured, exactly as numaprobe_memory_bandwidth_bytes_per_second.
Labels BandwidthLabels(const Snapshot& s, const BaselineValue& v) {
  Labels labels = PairLabels(v);
  if (s.bandwidth_threads <= 1) return labels;
  std::size_t threads = static_cast<std::size_t>(s.bandwidth_threads);
  for (const TimedRecord& t : s.FiguresOf(BandwidthProbe())) {
    const auto& r = ResultOf<k::BandwidthResult>(*t.record);
    const MemoryPair& p = t.record->target().pair;
    if (p.cpu_node != v.cpu_node || p.mem_node != v.mem_node || k::BandwidthOpName(r.op) != v.op ||
        (v.cpu >= 0 && p.cpu != v.cpu)) {
      continue;
    }
    if (!r.cpus.empty()) threads = r.cpus.size();
    break;
  }
  labels["threads"] = std::to_string(threads);
  return labels;
}

// Latency and bandwidth families of one kind of per-series value.
void AppendPair(const Snapshot& s, const std::vector<BaselineValue>& values, FamilyBuilder& latency,
                FamilyBuilder& bandwidth, bool figure_threads) {
  for (const BaselineValue& v : values) {
    if (v.probe == "latency") {
      latency.Add(PairLabels(v), v.value);
    } else if (v.probe == "bandwidth") {
      Labels labels = PairLabels(v);
      // The baseline keeps no thread count: label it with the configured one.
      if (s.bandwidth_threads > 1) labels["threads"] = std::to_string(s.bandwidth_threads);
      bandwidth.Add(figure_threads ? BandwidthLabels(s, v) : labels, v.value);
    }
  }
}

}  // namespace

void AppendBaselineFamilies(const Snapshot& s, std::vector<MetricFamily>& out) {
  const std::string how =
      " recorded as the median of the per-round figures of the first complete probe rounds (baseline.rounds) after "
      "first start, numaprobe baseline accept or reset, or a topology or settings change; kernel, microcode, "
      "firmware, CPU model and numaprobe upgrades keep it (see numaprobe_host_change_timestamp_seconds).";
  FamilyBuilder latency("numaprobe_memory_latency_baseline_seconds",
                        "Baseline of numaprobe_memory_latency_seconds," + how, MetricType::Gauge);
  FamilyBuilder bandwidth("numaprobe_memory_bandwidth_baseline_bytes_per_second",
                          "Baseline of numaprobe_memory_bandwidth_bytes_per_second," + how, MetricType::Gauge);
  AppendPair(s, s.baseline, latency, bandwidth, false);
  out.push_back(latency.Build());
  out.push_back(bandwidth.Build());

  const std::string spread_how =
      ": (max - min) / median of the per-round figures the baseline value was recorded from.";
  FamilyBuilder latency_spread("numaprobe_memory_latency_baseline_spread_ratio",
                               "Spread of numaprobe_memory_latency_baseline_seconds" + spread_how, MetricType::Gauge);
  FamilyBuilder bandwidth_spread("numaprobe_memory_bandwidth_baseline_spread_ratio",
                                 "Spread of numaprobe_memory_bandwidth_baseline_bytes_per_second" + spread_how,
                                 MetricType::Gauge);
  AppendPair(s, s.baseline_spread, latency_spread, bandwidth_spread, false);
  out.push_back(latency_spread.Build());
  out.push_back(bandwidth_spread.Build());

  const std::string recent_how =
      " over the series' last 3 successful figures; absent until the series has 3 figures since start or the last "
      "replan. Compare it with the baseline: one outlier figure moves it not at all.";
  FamilyBuilder latency_recent("numaprobe_memory_latency_recent_median_seconds",
                               "Median of numaprobe_memory_latency_seconds" + recent_how, MetricType::Gauge);
  FamilyBuilder bandwidth_recent("numaprobe_memory_bandwidth_recent_median_bytes_per_second",
                                 "Median of numaprobe_memory_bandwidth_bytes_per_second" + recent_how,
                                 MetricType::Gauge);
  AppendPair(s, s.recent_medians, latency_recent, bandwidth_recent, true);
  out.push_back(latency_recent.Build());
  out.push_back(bandwidth_recent.Build());

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
