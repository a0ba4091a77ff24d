// SPDX-License-Identifier: Apache-2.0
// The latency kind: idle memory latency by a dependent pointer chase from one
// CPU of cpu_node over a buffer on mem_node (kernels/latency.h).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "daemon/config/config_values.h"
#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/memory_buffers.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "daemon/probing/slit_scale.h"
#include "kernels/latency.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using LatencyRecord = ProbeRecordOf<k::LatencyResult>;

constexpr std::size_t kMiB = 1024 * 1024;

// 0 (sized from the LLC) or at least 1 MiB: "buffer_size: 64" meant MiB, and
// a chase that fits in cache measures the cache, not the node.
std::string AutomaticOrAtLeastMiB(std::uint64_t bytes) {
  return bytes == 0 || bytes >= kMiB ? "" : FormatSize(bytes) + " is out of range: 0 (automatic) or at least 1MiB";
}

// The settings (config/kind_setting.h). Below 64 bytes two chased elements
// share a cache line; above 4096 every load is also a TLB miss and the
// figure stops being the memory's latency.
constexpr KindSetting kLatencyStride{"stride_bytes",
                                     "--stride",
                                     64,
                                     4096,
                                     false,
                                     PowerOfTwoRule,
                                     "Latency: bytes between chased elements, a power of two"};
constexpr KindSetting kLatencyBuffer{
    "buffer_size",
    "--latency-buffer",
    0,
    kMaxConfigSizeBytes,
    true,
    AutomaticOrAtLeastMiB,
    "Latency buffer size, e.g. 256MiB (0: 2 samples of loads, at least 16MiB, flushed before each sample)"};
constexpr KindSetting kLatencySamples{"samples",
                                      "--samples",
                                      1,
                                      kMaxSamplesPerPair,
                                      false,
                                      nullptr,
                                      "Latency and core-to-core: accepted samples per pair"};
// At most what one sample can chase within the run's 2 s
// (k::LatencyRunSpec::max_wall_ns) at 200 ns a load.
constexpr KindSetting kLatencyLoads{
    "loads_per_sample", "--loads", 1000, 10'000'000, false, nullptr, "Latency: dependent loads per sample"};
constexpr const char* kWhat = " of a dependent pointer chase from a CPU of cpu_node to memory on mem_node";

Labels PairLabels(const MemoryPair& p, bool per_cpu) {
  Labels labels{{"cpu_node", std::to_string(p.cpu_node)}, {"mem_node", std::to_string(p.mem_node)}};
  if (per_cpu) labels["cpu"] = std::to_string(p.cpu);
  return labels;
}

class LatencyKind final : public ProbeKind, public KindCommandLine {
 public:
  LatencyKind()
      : ProbeKind({.title = "memory latency",
                   .has_baseline = true,
                   .baseline_names = {"numaprobe_memory_latency", "seconds"},
                   // Half the +10% step the drift alert must catch; 2.5 noise standard
                   // deviations (2%) from a healthy figure (bench/detection_thresholds.py).
                   .confirmation_band = 0.05,
                   .regression = Regression::kHigherIsWorse,
                   .compared_with_peers = true,
                   .test_scaled = true,
                   .families = FamilySpecs(),
                   .figure_help = kFigureHelp}) {}
  // Its flags: the KindCommandLine methods below.
  const KindCommandLine& command_line() const override { return *this; }

  std::string_view name() const override { return "latency"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<LatencyConfig>().enabled; }

  std::vector<KindSetting> Settings() const override {
    return {kLatencyStride, kLatencyBuffer, kLatencySamples, kLatencyLoads};
  }
  std::vector<std::string_view> ConfigKeys() const override { return ConfigKeysOf({"enabled"}, Settings()); }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    LatencyConfig& latency = probes.Of<LatencyConfig>();
    s.Bool("enabled", latency.enabled);
    ReadSetting(s, kLatencyStride, latency.stride_bytes);
    ReadSetting(s, kLatencyBuffer, latency.buffer_bytes);
    ReadSetting(s, kLatencySamples, latency.samples);
    ReadSetting(s, kLatencyLoads, latency.loads_per_sample);
  }
  std::vector<ConfiguredBuffer> ConfiguredBuffers(const Config& config) const override {
    return {{"buffer_size", config.probes.Of<LatencyConfig>().buffer_bytes}};
  }

  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings&, const k::Topology&) const override {
    std::vector<ProbeTarget> targets;
    for (const MemoryPair& pair : plan.memory_pairs) targets.push_back(MemoryTarget(pair));
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("latency cpu {} -> node {}", t.pair.cpu, t.pair.mem_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::LatencyResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Simulated(const ProbeTarget& t, k::Outcome outcome, double figure) const override {
    k::LatencyResult result;
    result.outcome = outcome;
    result.seconds_per_load.median = figure;
    return std::make_shared<ProbeRecordOf<k::LatencyResult>>(*this, t, std::move(result));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    k::LatencyResult result;
    result.buffer.node = t.pair.mem_node;
    const ProbeLockHold hold = runner.Acquire(stop);
    result.cpu = runner.ChooseCpus(t.pair, 1).front();  // after the lock: idle now, not before the wait
    if (!runner.Cancelled(hold, result)) {
      auto buffer = ChaseBuffer(runner, t.pair.mem_node, runner.topology().LlcBytesOf(t.pair.cpu));
      if (!buffer.ok()) {
        result.outcome = buffer.failure().outcome;
        result.reason = buffer.failure().reason;
      } else {
        k::LatencyRunSpec spec = runner.settings().Of<LatencySettings>().spec;
        spec.cpu = result.cpu;
        spec.stop = stop;
        result = k::MeasureLatency(*buffer.value(), spec);
        ScaleForTest(result.seconds_per_load, runner.settings().TestScaleOf(name()));
        if (IsPlacementOutcome(result.outcome)) DropChaseBuffer(runner, t.pair.mem_node);
      }
    }
    return std::make_shared<LatencyRecord>(*this, t, std::move(result));
  }

  std::string SettingsFingerprint(const Config& config) const override {
    const auto& l = config.probes.Of<LatencyConfig>();
    return fmt::format("latency.stride={};latency.buffer={};latency.loads={}", l.stride_bytes, l.buffer_bytes,
                       l.loads_per_sample);
  }
  double FigureOf(const ProbeRecord& record) const override {
    return ResultOf<k::LatencyResult>(record).seconds_per_load.median;
  }

  // A pointer chase only loads: it compares with the advertised read latency.
  std::optional<AdvertisedFigure> AdvertisedOf(const ProbeRecord& record) const override {
    return AdvertisedFigure{HmatAttribute::kReadLatency, ResultOf<k::LatencyResult>(record).seconds_per_load.median};
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::LatencyResult>(record);
    return {{"page_size", k::PageSizeName(r.buffer)},
            {"buffer_bytes", std::to_string(r.buffer.bytes)},
            {"stride", std::to_string(r.stride)},
            {"window_bytes", std::to_string(r.window_bytes)},
            {"loads_per_sample", std::to_string(r.loads_per_sample)},
            {"samples", std::to_string(r.seconds_per_load.n)}};
  }

  static std::vector<FamilySpec> FamilySpecs() {
    return {{"numaprobe_memory_latency_seconds",
             std::string("Median load-to-use memory latency") + kWhat + kCachedHelp},
            {"numaprobe_memory_latency_spread_seconds",
             std::string("Median absolute deviation of the memory latency samples") + kWhat + kCachedHelp},
            {"numaprobe_memory_latency_min_seconds",
             std::string("Fastest memory latency sample") + kWhat + kCachedHelp},
            {"numaprobe_memory_latency_remote_local_ratio",
             std::string("Memory latency from cpu_node to mem_node divided by the latency from cpu_node to its own "
                         "memory (1 for the local pair)") +
                 kCachedHelp},
            {"numaprobe_memory_latency_distance",
             std::string("Measured distance from cpu_node to mem_node on the firmware's SLIT scale, beside "
                         "numaprobe_numa_distance: 10 times numaprobe_memory_latency_remote_local_ratio, rounded "
                         "(10 for the local pair)") +
                 kCachedHelp}};
  }

  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext& context,
                     FigureSink& sink) const override {
    // (cpu or -1, cpu_node, mem_node) -> newest record: the ratio and the
    // figures it is computed from stay consistent even if a plan repeats a pair.
    using Key = std::tuple<int, int, int>;
    std::map<Key, const TimedRecord*> newest;
    for (const TimedRecord& t : latest) {
      const MemoryPair& p = t.record->target().pair;
      auto [it, inserted] = newest.try_emplace(Key{context.per_cpu ? p.cpu : -1, p.cpu_node, p.mem_node}, &t);
      if (!inserted && t.unix_seconds > it->second->unix_seconds) it->second = &t;
    }
    for (const auto& [key, timed] : newest) {
      const auto& [cpu, cpu_node, mem_node] = key;
      const k::SampleStats& stats = ResultOf<k::LatencyResult>(*timed->record).seconds_per_load;
      const Labels labels = PairLabels(timed->record->target().pair, context.per_cpu);
      sink.Add("numaprobe_memory_latency_seconds", labels, stats.median);
      sink.Add("numaprobe_memory_latency_spread_seconds", labels, stats.mad);
      sink.Add("numaprobe_memory_latency_min_seconds", labels, stats.min);
      // Only against a measured local pair: a CPU-only node has no local
      // memory, and a ratio against a guessed reference would look like a
      // measurement.
      const auto local = newest.find(Key{cpu, cpu_node, cpu_node});
      if (local == newest.end()) continue;
      const double local_seconds = ResultOf<k::LatencyResult>(*local->second->record).seconds_per_load.median;
      if (local_seconds > 0) {
        const double ratio = mem_node == cpu_node ? 1.0 : stats.median / local_seconds;
        sink.Add("numaprobe_memory_latency_remote_local_ratio", labels, ratio);
        sink.Add("numaprobe_memory_latency_distance", labels, SlitScale(ratio));
      }
    }
  }

  // Which statistic the figure is, so that it is compared with other tools'
  // figures like for like (docs/measurement.md, "Which statistic").
  static constexpr std::string_view kFigureHelp =
      "Idle latency (--tests latency): each sample times --loads dependent loads (40000 by default; 5000\n"
      "to 40000 after preemptions, more when the clock is coarse) and gives their average time per load;\n"
      "the published figure is the MEDIAN of the --samples accepted samples (7 by default), and the\n"
      "minimum is the fastest of them. The table prints median / minimum in ns; the JSON gives\n"
      "median_seconds and min_seconds. Compare the median with Intel MLC's idle latency and with\n"
      "`multichase -a` (both averages), and the minimum with multichase's default figure (the best of\n"
      "its 0.5 s samples).";

  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    FailureNotes notes;
    std::set<std::string> pages;
    MatrixSection matrix("");
    for (const RecordPtr& record : records) {
      const auto& r = ResultOf<k::LatencyResult>(*record);
      const MemoryPair& p = record->target().pair;
      if (record->ok()) {
        // The median is the published figure; the minimum beside it is what
        // multichase's default (the best of its samples) compares with.
        matrix.Set(MatrixSection::RowLabel(p), p.mem_node,
                   fmt::format("{:.1f} / {:.1f}", r.seconds_per_load.median * 1e9, r.seconds_per_load.min * 1e9));
        pages.insert(k::PageSizeName(r.buffer));
      } else {
        matrix.Set(MatrixSection::RowLabel(p), p.mem_node, notes.Add(Describe(record->target()), *record));
      }
    }
    if (matrix.empty()) return {};
    std::string page_list;
    for (const auto& page : pages) page_list += (page_list.empty() ? "" : ", ") + page;
    ReportSection section = matrix.Build(notes.notes());
    section.title = fmt::format("Idle memory latency (ns, median / minimum of the samples; pages: {})",
                                page_list.empty() ? "-" : page_list);
    return {section};
  }

  void AddSettings(const Config& config, ProbeSettings& settings) const override {
    const LatencyConfig& c = config.probes.Of<LatencyConfig>();
    LatencySettings& s = settings.Of<LatencySettings>();
    s.spec.samples = c.samples;
    s.spec.loads_per_sample = c.loads_per_sample;
    s.buffer_bytes = c.buffer_bytes;
    s.stride = c.stride_bytes;
  }

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    LatencySettings& s = settings.Of<LatencySettings>();
    flags.AddSetting(name(), kLatencyStride, s.stride);
    flags.AddSetting(name(), kLatencyBuffer, s.buffer_bytes);
    flags.AddSetting(name(), kLatencySamples, s.spec.samples);
    flags.AddSetting(name(), kLatencyLoads, s.spec.loads_per_sample);
  }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::LatencyResult>(record);
    const MemoryPair& p = record.target().pair;
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpu", r.cpu},  // the CPU that measured: any of cpu_node unless the operator named one
              {"planned_cpu", p.cpu},
              {"cpu_node", p.cpu_node},
              {"mem_node", p.mem_node},
              {"loads_per_sample", r.loads_per_sample},
              // Samples tried, the shortest after preemptions and the longest the
              // clock asked for (kernels/adaptive_sampling.h).
              {"attempts", r.attempts},
              {"shortest_sample_loads", r.shortest_sample_loads},
              {"longest_sample_loads", r.longest_sample_loads},
              {"flushed", r.flushed},
              {"stride_bytes", r.stride},
              {"window_bytes", r.window_bytes},
              {"buffer", BufferToJson(r.buffer)}});
    j.update(StatsToJson(record.ok(), r.seconds_per_load, "seconds"));
    return j;
  }
};

}  // namespace

const ProbeKind& LatencyProbe() {
  static const LatencyKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
