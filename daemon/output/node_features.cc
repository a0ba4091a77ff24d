// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/node_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "daemon/common/hmat.h"
#include "daemon/common/wall_clock.h"
#include "daemon/probing/slit_scale.h"

namespace numaprobe::daemon {
namespace {

using Pair = std::pair<int, int>;  // (cpu_node, mem_node)
using PairMap = std::map<Pair, double>;

// Keeps the worse of two figures of one pair (per-CPU mode: several CPUs).
void KeepWorse(PairMap& figures, Pair pair, double value, bool higher_is_worse) {
  const auto [it, inserted] = figures.try_emplace(pair, value);
  if (!inserted) it->second = higher_is_worse ? std::max(it->second, value) : std::min(it->second, value);
}

// One figure kind over the pairs: the worst local, the worst remote, and per
// CPU node with its own figure the worst remote over local.
struct Summary {
  std::optional<double> local;
  std::optional<double> remote;
  std::optional<double> remote_over_local;
};

Summary Summarise(const PairMap& figures, bool higher_is_worse) {
  const auto worse = [&](std::optional<double>& kept, double value) {
    if (!kept || (higher_is_worse ? value > *kept : value < *kept)) kept = value;
  };
  Summary summary;
  for (const auto& [pair, value] : figures) {
    const auto [cpu_node, mem_node] = pair;
    if (cpu_node == mem_node) {
      worse(summary.local, value);
      continue;
    }
    worse(summary.remote, value);
    const auto local = figures.find({cpu_node, cpu_node});
    if (local != figures.end() && local->second > 0) worse(summary.remote_over_local, value / local->second);
  }
  return summary;
}

std::string Whole(double value) { return fmt::format("{}", std::llround(value)); }

void AddIf(std::vector<NodeFeature>& out, std::string name, const std::optional<double>& value, double scale) {
  if (value) out.push_back({std::move(name), Whole(*value * scale)});
}

}  // namespace

std::vector<NodeFeature> NodeFeaturesOf(const std::vector<RecordPtr>& records, bool drift_alerts_armed) {
  PairMap idle_seconds;  // read latency, the slowest CPU of a pair
  PairMap peak_read;     // bytes per second, the slowest stream of a pair
  for (const RecordPtr& record : records) {
    if (!record->ok()) continue;
    const std::optional<AdvertisedFigure> figure = record->kind().AdvertisedOf(*record);
    if (!figure) continue;
    const Pair pair{record->target().pair.cpu_node, record->target().pair.mem_node};
    if (figure->attribute == HmatAttribute::kReadLatency && !figure->whole_node) {
      KeepWorse(idle_seconds, pair, figure->value, true);
    } else if (figure->attribute == HmatAttribute::kReadBandwidth && figure->whole_node) {
      KeepWorse(peak_read, pair, figure->value, false);
    }
  }

  std::vector<NodeFeature> out;
  const Summary lat = Summarise(idle_seconds, true);
  AddIf(out, "latency-local-ns", lat.local, 1e9);
  AddIf(out, "latency-remote-worst-ns", lat.remote, 1e9);
  AddIf(out, "latency-remote-local-pct", lat.remote_over_local, 100);
  const Summary bw = Summarise(peak_read, false);
  AddIf(out, "bandwidth-local-mbps", bw.local, 1e-6);
  AddIf(out, "bandwidth-remote-worst-mbps", bw.remote, 1e-6);
  AddIf(out, "bandwidth-remote-local-pct", bw.remote_over_local, 100);
  out.push_back({"drift-alerts-armed", drift_alerts_armed ? "true" : "false"});
  // Only where the CPU node's own latency is measured: the scale is relative to it.
  for (const auto& [pair, seconds] : idle_seconds) {
    const auto local = idle_seconds.find({pair.first, pair.first});
    if (local == idle_seconds.end() || local->second <= 0) continue;
    out.push_back({fmt::format("distance-{}-{}", pair.first, pair.second),
                   Whole(pair.first == pair.second ? 10 : SlitScale(seconds / local->second)), false});
  }
  return out;
}

std::string NodeFeatureFileText(const std::vector<NodeFeature>& features, double expiry_unix_seconds) {
  std::string text =
      "# Measured NUMA figures of this host, kept up to date by numaprobe serve (node_feature_directory);\n"
      "# Node Feature Discovery ignores them once they expire: a stopped daemon's labels lapse.\n";
  text += fmt::format("# +expiry-time={}\n", UtcTime(expiry_unix_seconds, "%Y-%m-%dT%H:%M:%SZ"));
  for (const NodeFeature& f : features) {
    if (!f.label) text += "# +no-label\n";
    text += fmt::format("{}/{}={}\n", kNodeFeatureNamespace, f.name, f.value);
  }
  return text;
}

}  // namespace numaprobe::daemon
