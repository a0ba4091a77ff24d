// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/hmat_report.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "kernels/cpulist.h"
#include "kernels/stats.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using nlohmann::json;
using Pair = std::pair<int, int>;  // (cpu_node, mem_node)

std::optional<double> Ratio(const std::optional<double>& measured, const std::optional<double>& advertised) {
  if (!measured || !advertised || *advertised <= 0) return std::nullopt;
  return *measured / *advertised;
}

// The measured figures of each pair, by attribute.
using Measured = std::map<Pair, std::map<HmatAttribute, std::vector<double>>>;

Measured Collect(const std::vector<RecordPtr>& records) {
  Measured m;
  for (const RecordPtr& record : records) {
    if (!record->ok()) continue;
    if (const auto figure = record->kind().AdvertisedOf(*record); figure && !figure->whole_node) {
      const MemoryPair& p = record->target().pair;
      m[{p.cpu_node, p.mem_node}][figure->attribute].push_back(figure->value);
    }
  }
  return m;
}

const HmatRatioFamily kHmatLatencyRatio{
    "numaprobe_memory_latency_hmat_ratio",
    "Measured idle latency of the pair (cpu_node to mem_node; the median of its latest figures) over the read "
    "latency the HMAT advertises "
    "for its CPU node; above 1 is slower than advertised."};
const HmatRatioFamily kHmatBandwidthRatio{"numaprobe_memory_bandwidth_hmat_ratio",
                                          "Measured bandwidth of the pair (cpu_node to mem_node) and op (read, "
                                          "write) over the HMAT's "
                                          "advertised bandwidth for its CPU node; below 1 is less than advertised."};

std::string Cell(const std::optional<double>& value, double scale, int decimals) {
  return value ? fmt::format("{:.{}f}", *value * scale, decimals) : "-";
}

json Number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

const std::vector<ComparedAttribute>& ComparedAttributes() {
  static const std::vector<ComparedAttribute> kCompared = {
      {HmatAttribute::kReadLatency, "read lat", "latency_seconds", "latency_ratio", &kHmatLatencyRatio, ""},
      {HmatAttribute::kReadBandwidth, "read bw", "read_bytes_per_second", "read_bandwidth_ratio", &kHmatBandwidthRatio,
       "read"},
      {HmatAttribute::kWriteBandwidth, "write bw", "write_bytes_per_second", "write_bandwidth_ratio",
       &kHmatBandwidthRatio, "write"},
  };
  return kCompared;
}

std::optional<double> HmatComparison::MeasuredOf(HmatAttribute attribute) const {
  const auto it = measured.find(attribute);
  return it == measured.end() ? std::nullopt : std::optional(it->second);
}

std::optional<double> HmatComparison::RatioOf(HmatAttribute attribute) const {
  const auto it = ratio.find(attribute);
  return it == ratio.end() ? std::nullopt : std::optional(it->second);
}

std::vector<HmatComparison> CompareWithHmat(const std::vector<HmatTarget>& hmat,
                                            const std::vector<RecordPtr>& records) {
  std::vector<HmatComparison> out;
  for (const auto& [pair, figures] : Collect(records)) {
    const HmatTarget* advertised = HmatFor(hmat, pair.first, pair.second);
    if (advertised == nullptr) continue;
    HmatComparison c;
    c.cpu_node = pair.first;
    c.mem_node = pair.second;
    c.advertised = advertised;
    for (const auto& [attribute, values] : figures) {
      const double median = *k::Median(values);
      c.measured[attribute] = median;
      if (const auto ratio = Ratio(median, advertised->Of(attribute))) c.ratio[attribute] = *ratio;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<ReportSection> HmatSections(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records) {
  if (hmat.empty()) return {};
  ReportSection advertised;
  advertised.title = "Advertised by the firmware (ACPI HMAT; latency ns, bandwidth GB/s)";
  advertised.corner = "target (initiators)";
  advertised.columns = {"read lat", "write lat", "read bw", "write bw"};
  for (const HmatTarget& t : hmat) {
    advertised.row_labels.push_back(
        fmt::format("node {} ({}: {})", t.mem_node, t.class_name(), k::FormatCpuList(t.initiators)));
    advertised.cells.push_back({Cell(t.read_latency_seconds, 1e9, 0), Cell(t.write_latency_seconds, 1e9, 0),
                                Cell(t.read_bandwidth_bytes_per_second, 1e-9, 1),
                                Cell(t.write_bandwidth_bytes_per_second, 1e-9, 1)});
  }
  std::vector<ReportSection> sections = {advertised};
  const std::vector<HmatComparison> compared = CompareWithHmat(hmat, records);
  if (compared.empty()) return sections;
  ReportSection ratio;
  ratio.title = "Measured / advertised (ACPI HMAT)";
  ratio.corner = "cpu node -> mem node";
  for (const ComparedAttribute& a : ComparedAttributes()) ratio.columns.push_back(a.column);
  for (const HmatComparison& c : compared) {
    ratio.row_labels.push_back(fmt::format("node {} -> node {}", c.cpu_node, c.mem_node));
    std::vector<std::string> cells;
    for (const ComparedAttribute& a : ComparedAttributes()) cells.push_back(Cell(c.RatioOf(a.attribute), 1, 2));
    ratio.cells.push_back(std::move(cells));
  }
  ratio.notes = {"latency: measured idle latency over the advertised read latency (above 1: slower than advertised);",
                 "bandwidth: measured over advertised (below 1: less than advertised)."};
  sections.push_back(ratio);
  return sections;
}

json HmatToJson(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records) {
  json targets = json::array();
  for (const HmatTarget& t : hmat) {
    targets.push_back({{"mem_node", t.mem_node},
                       {"initiator_class", t.class_name()},
                       {"initiators", t.initiators},
                       {"read_latency_seconds", Number(t.read_latency_seconds)},
                       {"write_latency_seconds", Number(t.write_latency_seconds)},
                       {"read_bandwidth_bytes_per_second", Number(t.read_bandwidth_bytes_per_second)},
                       {"write_bandwidth_bytes_per_second", Number(t.write_bandwidth_bytes_per_second)}});
  }
  json measured = json::array();
  for (const HmatComparison& c : CompareWithHmat(hmat, records)) {
    json pair = {{"cpu_node", c.cpu_node}, {"mem_node", c.mem_node}, {"initiator_class", c.advertised->class_name()}};
    for (const ComparedAttribute& a : ComparedAttributes()) pair[a.measured_key] = Number(c.MeasuredOf(a.attribute));
    for (const ComparedAttribute& a : ComparedAttributes()) pair[a.ratio_key] = Number(c.RatioOf(a.attribute));
    measured.push_back(std::move(pair));
  }
  return {{"targets", targets}, {"measured", measured}};
}

}  // namespace numaprobe::daemon
