// SPDX-License-Identifier: Apache-2.0
// FamilyBuilder: assembles one prometheus::MetricFamily from series added in
// any order, for the collect-time families of daemon/metrics*.cc.
//
// Why not prometheus::Family: its children live until removed, so series of
// pairs that left the plan would keep being exported; building plain values
// per scrape follows the Snapshot exactly.
//
// Thread safety: none; build one per Collect() call.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

namespace numaprobe::daemon {

class FamilyBuilder {
 public:
  // `help` must be one line without backslashes: prometheus-cpp 1.0.1 writes
  // HELP unescaped.
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type);

  // Adds a series. A label set added twice keeps the value with the larger
  // `freshness` (first one on a tie): two samples with one label set make
  // Prometheus reject the second, so the newest figure wins instead.
  void Add(const std::map<std::string, std::string>& labels, double value, double freshness = 0);

  // The family, series in natural label order: label names alphabetically,
  // numeric values as numbers ("2" before "10"), so output is stable and reads
  // like the topology.
  prometheus::MetricFamily Build() const;

 private:
  using LabelSet = std::vector<std::pair<std::string, std::string>>;
  struct NaturalLess {
    bool operator()(const LabelSet& a, const LabelSet& b) const;
  };
  struct Sample {
    double value = 0;
    double freshness = 0;
  };

  std::string name_;
  std::string help_;
  prometheus::MetricType type_;
  std::map<LabelSet, Sample, NaturalLess> series_;
};

// Decimal label value of a node or CPU id.
inline std::string Id(int id) { return std::to_string(id); }

}  // namespace numaprobe::daemon
