// SPDX-License-Identifier: Apache-2.0
// The interleave bandwidth kind: does weighted interleave pay off? From each
// CPU node, one buffer spread over every memory node by
// MPOL_WEIGHTED_INTERLEAVE with the kernel's weights as they are now
// (/sys/kernel/mm/mempolicy/weighted_interleave/nodeN), its page split
// checked against those weights (kernels/weighted_interleave.h: a split off
// by more than one cycle is a failed run, placement_mismatch, never a
// figure), then read by every usable CPU of the node at once with the peak
// bandwidth kind's settings, idle gate and kernel call (kinds/peak_stream.h).
// Published per CPU node: that bandwidth, the share of the pages each node
// got, and its ratio to the best single node's peak read figure from the same
// CPU node, which the peak kind measured (read from the records the daemon
// publishes, or at a terminal from this invocation's: run both kinds).
//
// It runs on the peak kind's schedule (its interval and CPU budget, a budget
// of its own: serve/own_schedule.h), off by default as peak is. A host with
// one memory node, or a kernel without the policy, plans no run: the plan's
// notes say why once (the daemon's log at each plan, `numaprobe topology`,
// and `numaprobe probe`).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/interleave_result.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/peak_stream.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "kernels/bandwidth.h"
#include "kernels/weighted_interleave.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

// Its section, probes.interleave_bandwidth: only whether it runs; how it
// streams and when are the peak kind's settings.
struct InterleaveBandwidthConfig {
  bool enabled = false;
  bool operator==(const InterleaveBandwidthConfig&) const = default;
};

using InterleaveRecord = ProbeRecordOf<InterleaveResult>;

constexpr const char* kBufferName = "interleave_stream";
constexpr const char* kFigure = "numaprobe_memory_interleave_bandwidth_bytes_per_second";
constexpr const char* kShare = "numaprobe_memory_interleave_page_share_ratio";
constexpr const char* kGain = "numaprobe_memory_interleave_bandwidth_gain_ratio";

// The memory nodes a plan measures, ascending: what the buffer spreads over.
std::vector<int> MemoryNodes(const std::vector<MemoryPair>& pairs) {
  std::set<int> nodes;
  for (const MemoryPair& pair : pairs) nodes.insert(pair.mem_node);
  return {nodes.begin(), nodes.end()};
}

std::vector<int> MemoryNodes(const k::Topology& topology) {
  std::vector<int> nodes;
  for (const k::NodeInfo& node : topology.nodes()) {
    if (node.has_memory()) nodes.push_back(node.id);
  }
  return nodes;
}

// The host's answer for `memory_nodes`: the sysfs directory, then whether
// mbind takes the policy (asked on the lowest node, which any plan of this
// host may allocate on: an unknown mode is EINVAL whatever the mask).
std::optional<std::string> HostReason(const std::vector<int>& memory_nodes) {
  const std::optional<WeightedInterleave> current = ReadWeightedInterleave();
  if (memory_nodes.size() < 2 || !current) return NotPlannedReason(memory_nodes, current, "");
  return NotPlannedReason(memory_nodes, current, k::WeightedInterleaveRefusal({memory_nodes.front()}));
}

std::string WeightsText(const std::map<int, int>& weights) { return WeightsFact(weights); }

// "node 1 (4 CPUs)": a row is a node's CPUs, not one CPU.
std::string NodeRowLabel(int cpu_node, std::size_t cpus) {
  return fmt::format("node {} ({} CPU{})", cpu_node, cpus, cpus == 1 ? "" : "s");
}

class InterleaveBandwidthKind final : public ProbeKind {
 public:
  InterleaveBandwidthKind()
      : ProbeKind({.title = "interleaved memory bandwidth", .runs_by_default = false, .families = FamilySpecs()}) {}

  std::string_view name() const override { return "interleave_bandwidth"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<InterleaveBandwidthConfig>().enabled; }
  std::vector<std::string_view> ConfigKeys() const override { return {"enabled"}; }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    s.Bool("enabled", probes.Of<InterleaveBandwidthConfig>().enabled);
  }

  // The peak kind's schedule: its interval and a budget of the same share.
  std::optional<OwnSchedule> OwnScheduleOf(const Config& config) const override {
    const PeakBandwidthConfig& peak = config.probes.Of<PeakBandwidthConfig>();
    return OwnSchedule{peak.interval, peak.duty_cycle};
  }

  // Plans nothing of its own (its runs come from the memory pairs, Targets):
  // here it only says, once per plan, why this host gets no run.
  k::Expected<std::vector<ProbeTarget>> PlanTargets(const PlanOptions& /*options*/, const k::Topology& topology,
                                                    std::vector<std::string>& notes) const override {
    if (const std::optional<std::string> reason = HostReason(MemoryNodes(topology))) {
      notes.push_back(fmt::format("{} not planned: {}", name(), *reason));
    }
    return std::vector<ProbeTarget>{};
  }

  // One run per CPU node of the plan, over every memory node the plan
  // measures; none where the host cannot interleave. The buffer is not on
  // one node: mem_node is -1.
  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& /*settings*/,
                                   const k::Topology& /*topology*/) const override {
    std::vector<ProbeTarget> targets;
    if (HostReason(MemoryNodes(plan.memory_pairs))) return targets;
    std::set<int> cpu_nodes;
    for (const MemoryPair& pair : plan.memory_pairs) {
      if (!cpu_nodes.insert(pair.cpu_node).second) continue;
      MemoryPair interleaved = pair;
      interleaved.mem_node = -1;
      targets.push_back(MemoryTarget(interleaved, std::string(k::BandwidthOpName(k::BandwidthOp::kRead))));
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("interleaved read bandwidth node {} -> weighted interleave", t.pair.cpu_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<InterleaveResult>(*this, t, outcome, std::move(reason));
  }

  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    const PeakBandwidthSettings& settings = runner.settings().Of<PeakBandwidthSettings>();
    InterleaveResult result;
    result.op = k::BandwidthOp::kRead;
    const auto done = [&] { return std::make_shared<InterleaveRecord>(*this, t, std::move(result)); };
    const ProbeLockHold hold = runner.Acquire(stop);
    // Every usable CPU of the node (or the configured count): an interleaved
    // stream spreads over every node's memory, so the count that saturates
    // one node (the peak kind's search) may not saturate them all.
    if (!PeakStreamMayStart(runner, hold, t.pair, settings, result)) return done();
    const std::vector<int> usable = result.cpus;
    // The weights as the kernel has them now: they decide where the pages go.
    const InterleaveWeightsNow now = WeightsOf(MemoryNodes(runner.topology()), ReadWeightedInterleave());
    if (!now.problem.empty()) {
      result.outcome = k::Outcome::kBindFailed;
      result.reason = "weighted interleave: " + now.problem;
      return done();
    }
    result.weights = now.weights;
    auto buffer = Buffer(runner, now.weights, PeakBufferBytes(settings, usable.size()));
    if (!buffer.ok()) {
      result.outcome = buffer.failure().outcome;
      result.reason = buffer.failure().reason;
      return done();
    }
    static_cast<k::BandwidthResult&>(result) =
        MeasurePeakStream(runner, *buffer.value(), usable, usable.size(), k::BandwidthOp::kRead, 1, stop);
    if (IsPlacementOutcome(result.outcome)) runner.pool().Drop(kBufferName, -1);
    result.best_node = BestNodePeakOf(runner.published(), t.pair.cpu_node);
    return done();
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<InterleaveResult>(record);
    return {{"op", std::string(k::BandwidthOpName(r.op))},
            {"page_size", k::PageSizeName(r.buffer)},
            {"buffer_bytes", std::to_string(r.buffer.bytes)},
            {"burst_bytes", std::to_string(r.bytes_per_burst)},
            {"bursts", std::to_string(r.bytes_per_second.n)},
            {"isa", std::string(k::IsaName(r.isa))},
            {"weights", WeightsText(r.weights)}};
  }

  static std::vector<FamilySpec> FamilySpecs() {
    return {{kFigure, std::string("Median read bandwidth of CPUs of cpu_node streaming at once from one buffer spread "
                                  "over every memory node by MPOL_WEIGHTED_INTERLEAVE with the kernel's current "
                                  "weights, its page split verified against them; measured on the schedule of "
                                  "numaprobe_memory_peak_bandwidth_bytes_per_second, on idle nodes only") +
                          kCachedHelp},
            {kShare, std::string("Share of the interleaved buffer's bytes found on mem_node (move_pages) for "
                                 "numaprobe_memory_interleave_bandwidth_bytes_per_second of the same cpu_node") +
                         kCachedHelp},
            {kGain, std::string("numaprobe_memory_interleave_bandwidth_bytes_per_second over the best single "
                                "memory node's peak read bandwidth from the same cpu_node "
                                "(numaprobe_memory_peak_bandwidth_bytes_per_second, op=read) when it ran: above 1 "
                                "interleave pays off; absent without a peak figure") +
                        kCachedHelp}};
  }
  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext&, FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const auto& r = ResultOf<InterleaveResult>(*t.record);
      const std::string cpu_node = std::to_string(t.record->target().pair.cpu_node);
      sink.Add(kFigure, {{"cpu_node", cpu_node}}, r.bytes_per_second.median, t.unix_seconds);
      for (const auto& [node, share] : r.buffer.placement.node_shares) {
        sink.Add(kShare, {{"cpu_node", cpu_node}, {"mem_node", std::to_string(node)}}, share, t.unix_seconds);
      }
      if (const std::optional<double> gain = GainOf(r))
        sink.Add(kGain, {{"cpu_node", cpu_node}}, *gain, t.unix_seconds);
    }
  }

  // A row per CPU node: the figure, the best node's, their ratio, and each
  // memory node's share of the pages beside its weight.
  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    if (records.empty()) return {};
    std::set<int> nodes;
    for (const RecordPtr& record : records) {
      for (const auto& [node, weight] : ResultOf<InterleaveResult>(*record).weights) nodes.insert(node);
    }
    ReportSection section;
    section.title = "Interleaved read bandwidth (GB/s, median; MPOL_WEIGHTED_INTERLEAVE with the kernel's weights)";
    section.corner = "cpus";
    section.columns = {"GB/s", "best node GB/s", "ratio"};
    for (const int node : nodes) section.columns.push_back(fmt::format("node {} share (weight)", node));
    FailureNotes notes;
    for (const RecordPtr& record : records) {
      const auto& r = ResultOf<InterleaveResult>(*record);
      section.row_labels.push_back(NodeRowLabel(record->target().pair.cpu_node, r.cpus.size()));
      std::vector<std::string> row;
      if (record->ok()) {
        row.push_back(fmt::format("{:.2f}", r.bytes_per_second.median / 1e9));
      } else {
        row.push_back(notes.Add(Describe(record->target()), *record));
      }
      row.push_back(r.best_node
                        ? fmt::format("{:.2f} (node {})", r.best_node->bytes_per_second / 1e9, r.best_node->mem_node)
                        : "-");
      const std::optional<double> gain = record->ok() ? GainOf(r) : std::nullopt;
      row.push_back(gain ? fmt::format("{:.2f}", *gain) : "-");
      for (const int node : nodes) {
        const auto share = r.buffer.placement.node_shares.find(node);
        const auto weight = r.weights.find(node);
        row.push_back(fmt::format("{} ({})",
                                  share == r.buffer.placement.node_shares.end()
                                      ? std::string("-")
                                      : fmt::format("{:.1f}%", share->second * 100),
                                  weight == r.weights.end() ? std::string("-") : std::to_string(weight->second)));
      }
      section.cells.push_back(std::move(row));
    }
    section.notes = notes.notes();
    section.notes.push_back(
        "ratio: over the best single node's peak read figure from the same CPU node "
        "(--tests peak_bandwidth,interleave_bandwidth); \"-\" without one.");
    return {section};
  }

  // The split is in every record, failed or not, so that a guest with
  // several nodes can be checked against its weights from the JSON alone.
  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<InterleaveResult>(record);
    nlohmann::json weights = nlohmann::json::object();
    for (const auto& [node, weight] : r.weights) weights[std::to_string(node)] = weight;
    nlohmann::json shares = nlohmann::json::object();
    for (const auto& [node, share] : r.buffer.placement.node_shares) shares[std::to_string(node)] = share;
    const std::optional<double> gain = record.ok() ? GainOf(r) : std::nullopt;
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpus", r.cpus},
              {"threads", r.cpus.size()},
              {"cpu_node", record.target().pair.cpu_node},
              {"op", k::BandwidthOpName(r.op)},
              {"isa", k::IsaName(r.isa)},
              {"weights", weights},
              {"page_shares", shares},
              {"split_mismatch", r.buffer.placement.split_mismatch},
              {"bytes_per_burst", r.bytes_per_burst},
              {"bytes_total", r.bytes_total},
              {"buffer", BufferToJson(r.buffer)},
              {"best_node", r.best_node ? nlohmann::json(r.best_node->mem_node) : nlohmann::json(nullptr)},
              {"best_node_bytes_per_second",
               r.best_node ? nlohmann::json(r.best_node->bytes_per_second) : nlohmann::json(nullptr)},
              {"gain_ratio", gain ? nlohmann::json(*gain) : nlohmann::json(nullptr)}});
    j.update(StatsToJson(record.ok(), r.bytes_per_second, "bytes_per_second"));
    j["bursts"] = j["samples"];
    return j;
  }

 private:
  // The buffer, kept in the pool under its weights: a changed weight makes a
  // new one. One for every CPU node: the policy, not the CPU, places the pages.
  static k::Expected<k::BandwidthBuffer*> Buffer(ProbeRunner& runner, const std::map<int, int>& weights,
                                                 std::size_t bytes) {
    const k::PagePolicy pages = runner.pool().settings().pages;
    const std::string recipe = fmt::format("bytes={};weights={}", bytes, WeightsText(weights));
    return runner.pool().Get<k::BandwidthBuffer>(kBufferName, -1, recipe, bytes, [&] {
      k::BandwidthBufferSpec spec;
      spec.bytes = bytes;
      spec.pages = pages;
      spec.weighted_interleave = weights;
      return k::BandwidthBuffer::Create(spec);
    });
  }
};

}  // namespace

const ProbeKind& InterleaveBandwidthProbe() {
  static const InterleaveBandwidthKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
