// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/interleave_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "kernels/stats.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

// The kernel's "weightiness": weights are scaled to whole numbers in [1, 32].
constexpr std::uint64_t kWeightiness = 32;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr const char* kSysfsWeights = "/sys/kernel/mm/mempolicy/weighted_interleave";

// The kernel keeps bandwidth in whole MiB/s (the HMAT's unit after its 2^20 division).
std::uint64_t WholeMiB(double bytes_per_second) {
  return bytes_per_second > 0 ? static_cast<std::uint64_t>(bytes_per_second / kMiB) : 0;
}

// min(read, write) of a pair: the one figure the kernel keeps per node.
struct ReadWrite {
  std::vector<double> read;
  std::vector<double> write;
  std::optional<double> Min() const {
    if (read.empty() || write.empty()) return std::nullopt;
    return std::min(*k::Median(read), *k::Median(write));
  }
};

// Peak figures (AdvertisedFigure::whole_node) by CPU node, then memory node.
std::map<int, std::map<int, ReadWrite>> PeakFigures(const std::vector<RecordPtr>& records) {
  std::map<int, std::map<int, ReadWrite>> peaks;
  for (const RecordPtr& record : records) {
    if (!record->ok()) continue;
    const auto figure = record->kind().AdvertisedOf(*record);
    if (!figure || !figure->whole_node) continue;
    const MemoryPair& p = record->target().pair;
    ReadWrite& rw = peaks[p.cpu_node][p.mem_node];
    if (figure->attribute == HmatAttribute::kReadBandwidth) rw.read.push_back(figure->value);
    if (figure->attribute == HmatAttribute::kWriteBandwidth) rw.write.push_back(figure->value);
  }
  return peaks;
}

// What the kernel's auto mode computes from the HMAT: access class 1 (the
// CPU initiators), min(read, write), 0 where the firmware gives no figure.
std::map<int, int> FirmwareWeights(const std::vector<HmatTarget>& hmat, const std::vector<int>& memory_nodes) {
  std::map<int, std::uint64_t> mib;
  bool any = false;
  for (const int node : memory_nodes) {
    mib[node] = 0;
    for (const HmatTarget& t : hmat) {
      if (t.mem_node != node || t.access_class != 1) continue;
      if (t.read_bandwidth_bytes_per_second && t.write_bandwidth_bytes_per_second) {
        mib[node] = WholeMiB(std::min(*t.read_bandwidth_bytes_per_second, *t.write_bandwidth_bytes_per_second));
        any = any || mib[node] > 0;
      }
    }
  }
  return any ? KernelWeightReduction(mib) : std::map<int, int>{};
}

// The weights in use for the memory nodes; none when one of them has no
// readable weight (the kernel gives every memory node a file: one it left
// out, or one that could not be read, is unknown, not the default 1).
std::map<int, int> KernelWeights(const WeightedInterleave& current, const std::vector<int>& memory_nodes) {
  std::map<int, int> weights;
  for (const int node : memory_nodes) {
    const auto it = current.weights.find(node);
    if (it == current.weights.end()) return {};
    weights[node] = it->second;
  }
  return weights;
}

std::optional<double> Quotient(const std::optional<double>& over, const std::optional<double>& under) {
  if (!over || !under || *under <= 0) return std::nullopt;
  return *over / *under;
}

std::vector<std::string> Cells(const std::map<int, int>& weights, const std::vector<int>& memory_nodes,
                               const std::optional<double>& ratio) {
  std::vector<std::string> cells;
  for (const int node : memory_nodes) {
    const auto it = weights.find(node);
    cells.push_back(it == weights.end() ? "-" : std::to_string(it->second));
  }
  cells.push_back(ratio ? fmt::format("{:.2f}", *ratio) : "-");
  return cells;
}

}  // namespace

std::map<int, int> KernelWeightReduction(const std::map<int, std::uint64_t>& mib_per_second) {
  std::uint64_t total = 0;
  for (const auto& [node, bw] : mib_per_second) total += bw;
  std::map<int, int> weights;
  std::uint64_t divisor = 0;
  for (const auto& [node, bw] : mib_per_second) {
    const std::uint64_t scaled = kWeightiness * bw;
    const std::uint64_t weight = bw != 0 && total < scaled ? scaled / total : 1;
    weights[node] = static_cast<int>(weight);
    divisor = divisor == 0 ? weight : std::gcd(divisor, weight);
  }
  for (auto& [node, weight] : weights) weight /= static_cast<int>(divisor);
  return weights;
}

std::optional<double> InterleavedBandwidth(const std::map<int, int>& weights, const std::map<int, double>& per_node) {
  double total_weight = 0;
  for (const auto& [node, weight] : weights) total_weight += weight;
  std::optional<double> bound;
  for (const auto& [node, weight] : weights) {
    if (weight <= 0) continue;
    const auto it = per_node.find(node);
    if (it == per_node.end() || it->second <= 0) return std::nullopt;
    const double fills_at = it->second * total_weight / weight;
    bound = bound ? std::min(*bound, fills_at) : fills_at;
  }
  return bound;
}

std::vector<InterleaveWeights> InterleaveWeightsOf(const std::vector<RecordPtr>& records, const InterleaveHost& host) {
  const std::vector<int>& memory_nodes = host.memory_nodes;
  if (memory_nodes.size() < 2) return {};
  const auto peaks = PeakFigures(records);
  const std::map<int, int> firmware = FirmwareWeights(host.hmat, memory_nodes);
  const std::map<int, int> kernel = host.current ? KernelWeights(*host.current, memory_nodes) : std::map<int, int>{};
  // Each memory node's figure from its nearest CPU node, as the kernel takes
  // the firmware's figure of its nearest initiator; none until that CPU node
  // has measured it (not another CPU node's figure instead).
  const auto distance = [&](int from, int to) {
    if (from == to) return 0;
    const auto it = host.distances.find({from, to});
    return it == host.distances.end() ? std::numeric_limits<int>::max() : it->second;
  };
  std::map<int, std::uint64_t> nearest_mib;
  for (const int node : memory_nodes) {
    int nearest = -1;
    for (const int cpu_node : host.cpu_nodes) {
      if (nearest < 0 || distance(cpu_node, node) < distance(nearest, node)) nearest = cpu_node;
    }
    if (nearest < 0 || distance(nearest, node) == std::numeric_limits<int>::max() || !peaks.contains(nearest)) continue;
    const auto& by_mem = peaks.at(nearest);
    const auto it = by_mem.find(node);
    if (const std::optional<double> figure = it == by_mem.end() ? std::nullopt : it->second.Min()) {
      nearest_mib[node] = WholeMiB(*figure);
    }
  }
  // A vector with a node missing would give that node the kernel's "no
  // figure" weight of 1: a guess, not a measurement.
  const std::map<int, int> nearest =
      nearest_mib.size() == memory_nodes.size() ? KernelWeightReduction(nearest_mib) : std::map<int, int>{};
  std::vector<InterleaveWeights> out;
  for (const auto& [cpu_node, by_mem] : peaks) {
    InterleaveWeights w;
    w.cpu_node = cpu_node;
    w.firmware = firmware;
    w.kernel = kernel;
    w.measured_nearest = nearest;
    std::map<int, std::uint64_t> mib;
    for (const int node : memory_nodes) {
      const auto it = by_mem.find(node);
      const std::optional<double> figure = it == by_mem.end() ? std::nullopt : it->second.Min();
      if (figure) {
        w.measured_bandwidth[node] = *figure;
        mib[node] = WholeMiB(*figure);
      }
    }
    if (mib.size() == memory_nodes.size()) w.measured = KernelWeightReduction(mib);
    if (!kernel.empty() && !nearest.empty()) {
      w.kernel_over_nearest = Quotient(InterleavedBandwidth(kernel, w.measured_bandwidth),
                                       InterleavedBandwidth(nearest, w.measured_bandwidth));
    }
    out.push_back(std::move(w));
  }
  return out;
}

nlohmann::json InterleaveToJson(const std::vector<InterleaveWeights>& weights) {
  const auto vector = [](const std::map<int, int>& w) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [node, weight] : w) j[std::to_string(node)] = weight;
    return j;
  };
  nlohmann::json out = nlohmann::json::array();
  for (const InterleaveWeights& w : weights) {
    out.push_back({{"cpu_node", w.cpu_node},
                   {"measured", vector(w.measured)},
                   {"measured_nearest", vector(w.measured_nearest)},
                   {"kernel", vector(w.kernel)},
                   {"firmware", vector(w.firmware)},
                   {"kernel_over_nearest",
                    w.kernel_over_nearest ? nlohmann::json(*w.kernel_over_nearest) : nlohmann::json(nullptr)}});
  }
  return out;
}

std::vector<ReportSection> InterleaveSections(const std::vector<RecordPtr>& records, const InterleaveHost& host) {
  if (PeakFigures(records).empty()) return {};
  ReportSection section;
  section.title = "Interleave weights (MPOL_WEIGHTED_INTERLEAVE: pages of each memory node per round)";
  if (host.memory_nodes.size() < 2) {
    section.notes = {"One memory node: there is nothing to interleave."};
    return {section};
  }
  section.corner = "cpu node: weights";
  for (const int node : host.memory_nodes) section.columns.push_back(fmt::format("node {}", node));
  section.columns.push_back("of best");
  std::map<int, int> nearest;
  for (const InterleaveWeights& w : InterleaveWeightsOf(records, host)) {
    nearest = w.measured_nearest;
    // What the row's weights give an interleaved stream from the CPU node,
    // over what its own measured weights give (the best the model knows).
    const auto of_best = [&](const std::map<int, int>& weights) -> std::optional<double> {
      if (w.measured.empty() || weights.empty()) return std::nullopt;
      return Quotient(InterleavedBandwidth(weights, w.measured_bandwidth),
                      InterleavedBandwidth(w.measured, w.measured_bandwidth));
    };
    const auto row = [&](const std::string& source, const std::map<int, int>& weights) {
      section.row_labels.push_back(fmt::format("node {} {}", w.cpu_node, source));
      section.cells.push_back(Cells(weights, host.memory_nodes, of_best(weights)));
    };
    row("measured", w.measured);
    row("measured nearest", w.measured_nearest);
    if (!w.kernel.empty()) {
      const std::optional<bool> automatic = host.current->auto_mode;
      row(!automatic ? "kernel" : *automatic ? "kernel (auto)" : "kernel (manual)", w.kernel);
    }
    if (!w.firmware.empty()) row("firmware", w.firmware);
  }
  section.notes = {
      "measured: the kernel's reduction of min(read, write) peak bandwidth from the CPU node's CPUs to each node;",
      "measured nearest: the same of each node's figure from its nearest CPU node, as the kernel's auto mode takes",
      "the firmware's (one vector for every CPU node); kernel: the weights in use now; firmware: the kernel's",
      "reduction of the HMAT figures (what its auto mode sets); - until every memory node has its figure.",
      "of best: bandwidth of an all-core interleaved stream from the CPU node with the row's weights over that",
      "with the CPU node's measured weights."};
  if (!host.current) {
    section.notes.push_back("This kernel has no weighted interleave (Linux 6.9 and later).");
  } else if (!nearest.empty()) {
    std::string line;
    for (const auto& [node, weight] : nearest)
      line += fmt::format("echo {} > {}/node{}; ", weight, kSysfsWeights, node);
    section.notes.push_back("To set the measured nearest weights (as root; writing a node's weight switches");
    section.notes.push_back("weighted_interleave/auto to false), then run with numactl --weighted-interleave=all:");
    section.notes.push_back("  " + line.substr(0, line.size() - 2));
  }
  return {section};
}

}  // namespace numaprobe::daemon
