// SPDX-License-Identifier: Apache-2.0
// The loaded_latency kind (Intel MLC --loaded_latency, multichase multiload):
// the pointer chase from the pair's CPU to mem_node while the node's other
// CPUs stream to the same node at a swept injection delay, from saturation to
// idle (kernels/loaded_latency.h). One target per pair and traffic mix (the
// variant). On demand: `numaprobe probe --tests loaded_latency`; the daemon
// runs it only if probes.loaded_latency.enabled.
#include <fmt/format.h>

#include <algorithm>

#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/memory_buffers.h"
#include "daemon/probing/probe_runner.h"
#include "kernels/loaded_latency.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using LoadedLatencyRecord = ProbeRecordOf<k::LoadedLatencyResult>;

constexpr k::LoadTraffic kTraffics[] = {k::LoadTraffic::kRead, k::LoadTraffic::kReadNtWrite2To1};

std::vector<std::string> TrafficNames() {
  std::vector<std::string> names;
  for (k::LoadTraffic t : kTraffics) names.emplace_back(k::LoadTrafficName(t));
  return names;
}

k::LoadTraffic TrafficOf(const ProbeTarget& t) {
  for (k::LoadTraffic traffic : kTraffics) {
    if (k::LoadTrafficName(traffic) == t.variant) return traffic;
  }
  return k::LoadTraffic::kRead;
}

// "6400" for a delay, "idle" for the no-traffic reference point.
std::string DelayLabel(std::uint32_t delay_ns) {
  return delay_ns == k::kNoTrafficDelay ? "idle" : std::to_string(delay_ns);
}

// The reference point first, then the sweep, as measured.
std::vector<const k::LoadedLatencyPoint*> Points(const k::LoadedLatencyResult& r) {
  std::vector<const k::LoadedLatencyPoint*> points;
  if (r.reference.delay_ns == k::kNoTrafficDelay) points.push_back(&r.reference);  // measured, maybe disturbed
  for (const auto& p : r.points) points.push_back(&p);
  return points;
}

// The settings (config/kind_setting.h). Samples and loads are the
// configuration's only: `numaprobe probe` measures with their defaults.
constexpr KindSetting kLoadThreads{"load_threads",
                                   "--load-threads",
                                   0,
                                   4096,
                                   false,
                                   nullptr,
                                   "Loaded latency: load threads on the chase CPU's node (0: every other allowed CPU)"};
constexpr KindSetting kLoadedSamples{
    "samples", "", 1, kMaxSamplesPerPair, false, nullptr, "Loaded latency: accepted chase samples per point"};
// At most what one sample can chase within a point's 1 s
// (k::LoadedLatencySpec::point_timeout) at 1 us a load under saturation.
constexpr KindSetting kLoadedLoads{
    "loads_per_sample", "", 1000, 1'000'000, false, nullptr, "Loaded latency: dependent loads per sample"};

class LoadedLatencyKind final : public ProbeKind, public KindCommandLine {
 public:
  LoadedLatencyKind() : ProbeKind({.title = "loaded latency", .runs_by_default = false, .families = FamilySpecs()}) {}
  // Its flags: the KindCommandLine methods below.
  const KindCommandLine& command_line() const override { return *this; }

  std::string_view name() const override { return "loaded_latency"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<LoadedLatencyConfig>().enabled; }

  std::vector<KindSetting> Settings() const override { return {kLoadThreads, kLoadedSamples, kLoadedLoads}; }
  std::vector<std::string_view> ConfigKeys() const override { return ConfigKeysOf({"enabled", "traffic"}, Settings()); }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    LoadedLatencyConfig& loaded = probes.Of<LoadedLatencyConfig>();
    s.Bool("enabled", loaded.enabled);
    std::vector<std::string_view> traffic_names;
    for (k::LoadTraffic t : kTraffics) traffic_names.push_back(k::LoadTrafficName(t));
    if (auto traffic = s.ChoiceList("traffic", traffic_names, loaded.traffic)) {
      loaded.traffic.clear();
      for (std::size_t i : *traffic) loaded.traffic.emplace_back(traffic_names[i]);
    }
    ReadSetting(s, kLoadThreads, loaded.load_threads);
    ReadSetting(s, kLoadedSamples, loaded.samples);
    ReadSetting(s, kLoadedLoads, loaded.loads_per_sample);
  }

  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& settings, const k::Topology&) const override {
    std::vector<ProbeTarget> targets;
    for (const MemoryPair& pair : plan.memory_pairs) {
      for (const std::string& traffic : settings.Of<LoadedLatencySettings>().traffic)
        targets.push_back(MemoryTarget(pair, traffic));
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("loaded latency ({} traffic) cpu {} -> node {}", t.variant, t.pair.cpu, t.pair.mem_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::LoadedLatencyResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    const LoadedLatencySettings& settings = runner.settings().Of<LoadedLatencySettings>();
    k::LoadedLatencySpec spec = settings.spec;
    spec.mem_node = t.pair.mem_node;
    spec.traffic = TrafficOf(t);
    spec.stop = stop;
    spec.delays_ns.assign(settings.delays_ns.begin(), settings.delays_ns.end());
    // The chase CPU, then the load CPUs: the node's other allowed CPUs,
    // distinct cores first.
    const int wanted = settings.load_threads > 0 ? settings.load_threads + 1 : 1 << 20;
    spec.load_cpus = runner.ChooseCpus(t.pair, wanted);
    spec.chase_cpu = spec.load_cpus.front();
    spec.load_cpus.erase(spec.load_cpus.begin());

    k::LoadedLatencyResult result;
    result.chase_cpu = spec.chase_cpu;
    result.load_cpus = spec.load_cpus;
    result.mem_node = spec.mem_node;
    result.traffic = spec.traffic;
    if (spec.load_cpus.empty()) {
      // A node with one allowed CPU has nobody to generate the load.
      result.outcome = k::Outcome::kInvalidSpec;
      result.reason = fmt::format("node {} has no allowed CPU besides cpu {} to generate load from", t.pair.cpu_node,
                                  spec.chase_cpu);
      return std::make_shared<LoadedLatencyRecord>(*this, t, std::move(result));
    }
    const ProbeLockHold hold = runner.Acquire(stop);
    if (runner.Cancelled(hold, result)) return std::make_shared<LoadedLatencyRecord>(*this, t, std::move(result));
    auto chase = ChaseBuffer(runner, t.pair.mem_node, runner.topology().LlcBytesOf(t.pair.cpu));
    if (!chase.ok()) {
      result.outcome = chase.failure().outcome;
      result.reason = chase.failure().reason;
      return std::make_shared<LoadedLatencyRecord>(*this, t, std::move(result));
    }
    auto load = StreamBuffer(runner, t.pair.mem_node);
    if (!load.ok()) {
      result.outcome = load.failure().outcome;
      result.reason = load.failure().reason;
      return std::make_shared<LoadedLatencyRecord>(*this, t, std::move(result));
    }
    result = k::MeasureLoadedLatency(*chase.value(), *load.value(), spec);
    if (IsPlacementOutcome(result.outcome)) {
      DropChaseBuffer(runner, t.pair.mem_node);
      DropStreamBuffer(runner, t.pair.mem_node);
    }
    return std::make_shared<LoadedLatencyRecord>(*this, t, std::move(result));
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::LoadedLatencyResult>(record);
    return {{"op", std::string(k::LoadTrafficName(r.traffic))},
            {"page_size", k::PageSizeName(r.chase_buffer)},
            {"buffer_bytes", std::to_string(r.chase_buffer.bytes)},
            {"load_buffer_bytes", std::to_string(r.load_buffer.bytes)},
            {"load_threads", std::to_string(r.load_cpus.size())},
            {"isa", std::string(k::IsaName(r.isa))},
            {"points", std::to_string(r.points.size())}};
  }

  static std::vector<FamilySpec> FamilySpecs() {
    const std::string what =
        " while the other CPUs of cpu_node load mem_node with traffic (read, read2-ntwrite1) at an injection delay "
        "of delay_ns per KiB (idle: threads pinned, no traffic)";
    return {{"numaprobe_loaded_latency_seconds",
             "Median memory latency of a dependent pointer chase from a CPU of "
             "cpu_node to memory on mem_node" +
                 what + kCachedHelp},
            {"numaprobe_loaded_latency_load_bytes_per_second",
             "Median bandwidth the load threads moved during the latency samples" + what + kCachedHelp}};
  }

  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext& context,
                     FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const auto& r = ResultOf<k::LoadedLatencyResult>(*t.record);
      const MemoryPair& p = t.record->target().pair;
      for (const k::LoadedLatencyPoint* point : Points(r)) {
        if (point->outcome != k::Outcome::kOk) continue;
        Labels labels{{"cpu_node", std::to_string(p.cpu_node)},
                      {"mem_node", std::to_string(p.mem_node)},
                      {"traffic", std::string(k::LoadTrafficName(r.traffic))},
                      {"delay_ns", DelayLabel(point->delay_ns)}};
        if (context.per_cpu) labels["cpu"] = std::to_string(p.cpu);
        sink.Add("numaprobe_loaded_latency_seconds", labels, point->seconds_per_load.median, t.unix_seconds);
        sink.Add("numaprobe_loaded_latency_load_bytes_per_second", labels, point->load_bytes_per_second.median,
                 t.unix_seconds);
      }
    }
  }

  // One table per pair and traffic: the curve, point by point.
  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    std::vector<ReportSection> sections;
    for (const RecordPtr& record : records) {
      const auto& r = ResultOf<k::LoadedLatencyResult>(*record);
      const MemoryPair& p = record->target().pair;
      ReportSection section{fmt::format("Loaded latency, cpu {} -> node {}, {} traffic from {} load thread{} "
                                        "(ns, median; load GB/s during the samples)",
                                        p.cpu, p.mem_node, record->target().variant, r.load_cpus.size(),
                                        r.load_cpus.size() == 1 ? "" : "s"),
                            "delay ns/KiB",
                            {"latency ns", "load GB/s"},
                            {},
                            {},
                            {}};
      for (const k::LoadedLatencyPoint* point : Points(r)) {
        const bool ok = point->outcome == k::Outcome::kOk;
        section.row_labels.push_back(DelayLabel(point->delay_ns));
        section.cells.push_back({ok ? fmt::format("{:.1f}", point->seconds_per_load.median * 1e9) : "-",
                                 ok ? fmt::format("{:.2f}", point->load_bytes_per_second.median / 1e9) : "-"});
        if (!ok)
          section.notes.push_back(fmt::format("delay {}: {}: {}", DelayLabel(point->delay_ns),
                                              k::OutcomeName(point->outcome), point->reason));
      }
      if (!record->ok()) {
        section.notes.push_back(
            fmt::format("{}: {}: {}", Describe(record->target()), k::OutcomeName(record->outcome()), record->reason()));
      }
      sections.push_back(std::move(section));
    }
    return sections;
  }

  std::vector<PlotSeries> Curves(const std::vector<RecordPtr>& records) const override {
    std::vector<PlotSeries> curves;
    for (const RecordPtr& record : records) {
      const auto& r = ResultOf<k::LoadedLatencyResult>(*record);
      const MemoryPair& p = record->target().pair;
      PlotSeries series{fmt::format("cpu {} -> node {}, {}", p.cpu, p.mem_node, record->target().variant), {}};
      // From idle to saturation: the reference, then the longest delay first.
      std::vector<const k::LoadedLatencyPoint*> points = Points(r);
      std::stable_sort(points.begin(), points.end(), [](const auto* a, const auto* b) {
        return a->delay_ns > b->delay_ns;  // kNoTrafficDelay is the largest
      });
      for (const k::LoadedLatencyPoint* point : points) {
        if (point->outcome != k::Outcome::kOk) continue;
        series.points.push_back({point->load_bytes_per_second.median / 1e9, point->seconds_per_load.median * 1e9});
      }
      curves.push_back(std::move(series));
    }
    return curves;
  }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::LoadedLatencyResult>(record);
    const MemoryPair& p = record.target().pair;
    nlohmann::json points = nlohmann::json::array();
    for (const k::LoadedLatencyPoint* point : Points(r)) {
      const bool ok = point->outcome == k::Outcome::kOk;
      nlohmann::json j = {{"delay_ns", point->delay_ns == k::kNoTrafficDelay ? nlohmann::json(nullptr)
                                                                             : nlohmann::json(point->delay_ns)},
                          {"reference", point->delay_ns == k::kNoTrafficDelay},
                          {"outcome", k::OutcomeName(point->outcome)},
                          {"reason", point->reason},
                          {"load_bytes", point->load_bytes},
                          {"latency", StatsToJson(ok, point->seconds_per_load, "seconds")},
                          {"load", StatsToJson(ok, point->load_bytes_per_second, "bytes_per_second")}};
      points.push_back(std::move(j));
    }
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpu", r.chase_cpu},  // the CPU that chased: any of cpu_node unless the operator named one
              {"planned_cpu", p.cpu},
              {"cpu_node", p.cpu_node},
              {"mem_node", p.mem_node},
              {"traffic", k::LoadTrafficName(r.traffic)},
              {"load_cpus", r.load_cpus},
              {"isa", k::IsaName(r.isa)},
              {"loads_per_sample", r.loads_per_sample},
              {"stride_bytes", r.stride},
              {"chase_buffer", BufferToJson(r.chase_buffer)},
              {"load_buffer", BufferToJson(r.load_buffer)},
              {"points", points}});
    return j;
  }

  void AddSettings(const Config& config, ProbeSettings& settings) const override {
    const LoadedLatencyConfig& c = config.probes.Of<LoadedLatencyConfig>();
    LoadedLatencySettings& s = settings.Of<LoadedLatencySettings>();
    s.spec.samples = c.samples;
    s.spec.loads_per_sample = c.loads_per_sample;
    s.traffic = c.traffic;
    s.load_threads = c.load_threads;
  }

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    LoadedLatencySettings& s = settings.Of<LoadedLatencySettings>();
    flags.AddChoices("--traffic", s.traffic, TrafficNames(),
                     "Loaded latency: load traffic mixes (read, read2-ntwrite1)");
    flags.AddSetting(name(), kLoadThreads, s.load_threads);
    flags.AddIntList("--delays", s.delays_ns, 0, 1'000'000,
                     "Loaded latency: injection delays to sweep, ns per KiB each load thread moves (0: saturation)");
  }
};

}  // namespace

const ProbeKind& LoadedLatencyProbe() {
  static const LoadedLatencyKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
