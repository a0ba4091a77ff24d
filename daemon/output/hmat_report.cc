#include "daemon/output/hmat_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "daemon/probing/kinds/kinds.h"
#include "kernels/bandwidth.h"
#include "kernels/cpulist.h"
#include "kernels/latency.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using nlohmann::json;
using Pair = std::pair<int, int>;  // (cpu_node, mem_node)

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::optional<double> Ratio(const std::optional<double>& measured, const std::optional<double>& advertised) {
  if (!measured || !advertised || *advertised <= 0) return std::nullopt;
  return *measured / *advertised;
}

// The measured figures of each pair, by kind and op.
struct Measured {
  std::map<Pair, std::vector<double>> latency;
  std::map<Pair, std::vector<double>> read;
  std::map<Pair, std::vector<double>> write;
};

Measured Collect(const std::vector<RecordPtr>& records) {
  Measured m;
  for (const RecordPtr& record : records) {
    if (!record->ok()) continue;
    const MemoryPair& p = record->target().pair;
    const Pair pair{p.cpu_node, p.mem_node};
    if (&record->kind() == &LatencyProbe()) {
      m.latency[pair].push_back(ResultOf<k::LatencyResult>(*record).seconds_per_load.median);
    } else if (&record->kind() == &BandwidthProbe()) {
      const auto& r = ResultOf<k::BandwidthResult>(*record);
      if (r.op == k::BandwidthOp::kRead) m.read[pair].push_back(r.bytes_per_second.median);
      if (r.op == k::BandwidthOp::kWrite) m.write[pair].push_back(r.bytes_per_second.median);
    }
  }
  return m;
}

std::string Cell(const std::optional<double>& value, double scale, int decimals) {
  return value ? fmt::format("{:.{}f}", *value * scale, decimals) : "-";
}

json Number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

std::vector<HmatComparison> CompareWithHmat(const std::vector<HmatTarget>& hmat,
                                            const std::vector<RecordPtr>& records) {
  const Measured m = Collect(records);
  std::map<Pair, bool> pairs;
  for (const auto* figures : {&m.latency, &m.read, &m.write}) {
    for (const auto& [pair, values] : *figures) pairs[pair] = true;
  }
  std::vector<HmatComparison> out;
  for (const auto& [pair, unused] : pairs) {
    const HmatTarget* advertised = HmatFor(hmat, pair.first, pair.second);
    if (advertised == nullptr) continue;
    HmatComparison c;
    c.cpu_node = pair.first;
    c.mem_node = pair.second;
    c.advertised = advertised;
    const auto of = [&](const std::map<Pair, std::vector<double>>& figures) {
      const auto it = figures.find(pair);
      return it == figures.end() ? std::nullopt : Median(it->second);
    };
    c.latency_seconds = of(m.latency);
    c.read_bytes_per_second = of(m.read);
    c.write_bytes_per_second = of(m.write);
    c.latency_ratio = Ratio(c.latency_seconds, advertised->read_latency_seconds);
    c.read_bandwidth_ratio = Ratio(c.read_bytes_per_second, advertised->read_bandwidth_bytes_per_second);
    c.write_bandwidth_ratio = Ratio(c.write_bytes_per_second, advertised->write_bandwidth_bytes_per_second);
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
  ratio.columns = {"latency", "read bw", "write bw"};
  for (const HmatComparison& c : compared) {
    ratio.row_labels.push_back(fmt::format("node {} -> node {}", c.cpu_node, c.mem_node));
    ratio.cells.push_back(
        {Cell(c.latency_ratio, 1, 2), Cell(c.read_bandwidth_ratio, 1, 2), Cell(c.write_bandwidth_ratio, 1, 2)});
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
    measured.push_back({{"cpu_node", c.cpu_node},
                        {"mem_node", c.mem_node},
                        {"initiator_class", c.advertised->class_name()},
                        {"latency_seconds", Number(c.latency_seconds)},
                        {"read_bytes_per_second", Number(c.read_bytes_per_second)},
                        {"write_bytes_per_second", Number(c.write_bytes_per_second)},
                        {"latency_ratio", Number(c.latency_ratio)},
                        {"read_bandwidth_ratio", Number(c.read_bandwidth_ratio)},
                        {"write_bandwidth_ratio", Number(c.write_bandwidth_ratio)}});
  }
  return {{"targets", targets}, {"measured", measured}};
}

}  // namespace numaprobe::daemon
