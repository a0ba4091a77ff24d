// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/family_builder.h"

#include <algorithm>
#include <string_view>

namespace numaprobe::daemon {
namespace {

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// <0, 0, >0 like strcmp; decimal numbers (as std::to_string writes them, no
// leading zeros) compare by value.
int CompareValues(std::string_view a, std::string_view b) {
  if (IsNumber(a) && IsNumber(b) && a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b);
}

}  // namespace

FamilyBuilder::FamilyBuilder(std::string name, std::string help, prometheus::MetricType type)
    : name_(std::move(name)), help_(std::move(help)), type_(type) {}

bool FamilyBuilder::NaturalLess::operator()(const LabelSet& a, const LabelSet& b) const {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (const int c = a[i].first.compare(b[i].first); c != 0) return c < 0;
    if (const int c = CompareValues(a[i].second, b[i].second); c != 0) return c < 0;
  }
  return a.size() < b.size();
}

void FamilyBuilder::Add(const std::map<std::string, std::string>& labels, double value, double freshness) {
  LabelSet key(labels.begin(), labels.end());
  auto [it, inserted] = series_.try_emplace(std::move(key), Sample{value, freshness});
  if (!inserted && freshness > it->second.freshness) it->second = Sample{value, freshness};
}

prometheus::MetricFamily FamilyBuilder::Build() const {
  prometheus::MetricFamily family;
  family.name = name_;
  family.help = help_;
  family.type = type_;
  family.metric.reserve(series_.size());
  for (const auto& [labels, sample] : series_) {
    prometheus::ClientMetric metric;
    for (const auto& [name, value] : labels) metric.label.push_back({name, value});
    switch (type_) {
      case prometheus::MetricType::Counter:
        metric.counter.value = sample.value;
        break;
      case prometheus::MetricType::Gauge:
        metric.gauge.value = sample.value;
        break;
      default:
        metric.untyped.value = sample.value;
        break;
    }
    family.metric.push_back(std::move(metric));
  }
  return family;
}

}  // namespace numaprobe::daemon
