// SPDX-License-Identifier: Apache-2.0
// The bandwidth kind: read, non-temporal write and copy bandwidth from one
// (or `threads`) pinned CPUs of cpu_node to a buffer on mem_node
// (kernels/bandwidth.h). The op is the target's variant.
#include <fmt/format.h>

#include <algorithm>

#include "daemon/config/config_values.h"
#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/memory_buffers.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "kernels/bandwidth.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using BandwidthRecord = ProbeRecordOf<k::BandwidthResult>;

constexpr k::BandwidthOp kOps[] = {k::BandwidthOp::kRead, k::BandwidthOp::kWrite, k::BandwidthOp::kCopy};

// The settings (config/kind_setting.h). Non-temporal stores and vector
// loads move whole lines, so a burst is whole 64-byte lines.
constexpr KindSetting kBandwidthThreads{
    "threads",
    "--threads",
    1,
    1024,
    false,
    nullptr,
    "Bandwidth: pinned threads per measurement (peak_bandwidth: how many of each node's CPUs; "
    "default every one)"};
constexpr KindSetting kBandwidthBuffer{"buffer_size",
                                       "--bandwidth-buffer",
                                       0,
                                       kMaxConfigSizeBytes,
                                       true,
                                       nullptr,
                                       "Bandwidth buffer size per node, e.g. 512MiB"};
constexpr KindSetting kBandwidthBurst{"burst_size",
                                      "--burst",
                                      64 * 1024,
                                      kMaxConfigSizeBytes,
                                      true,
                                      WholeCacheLinesRule,
                                      "Bandwidth: bytes per thread per burst, e.g. 64MiB"};
constexpr KindSetting kBandwidthBursts{"bursts", "--bursts", 1, 1000, false, nullptr, "Bandwidth: bursts per estimate"};

k::BandwidthOp OpOf(const ProbeTarget& t) {
  for (k::BandwidthOp op : kOps) {
    if (k::BandwidthOpName(op) == t.variant) return op;
  }
  return k::BandwidthOp::kRead;
}

class BandwidthKind final : public ProbeKind, public KindCommandLine {
 public:
  BandwidthKind()
      : ProbeKind({.title = "memory bandwidth",
                   .has_baseline = true,
                   .baseline_names = {"numaprobe_memory_bandwidth", "bytes_per_second"},
                   // Half the -20% drop the drift alert must catch; 2.5 noise standard
                   // deviations (4%) from a healthy figure (bench/detection_thresholds.py).
                   .confirmation_band = 0.10,
                   .regression = Regression::kLowerIsWorse,
                   .test_scaled = true,
                   .families = FamilySpecs()}) {}
  // Its flags: the KindCommandLine methods below.
  const KindCommandLine& command_line() const override { return *this; }

  std::string_view name() const override { return "bandwidth"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<BandwidthConfig>().enabled; }

  std::vector<KindSetting> Settings() const override {
    return {kBandwidthThreads, kBandwidthBuffer, kBandwidthBurst, kBandwidthBursts};
  }
  std::vector<std::string_view> ConfigKeys() const override { return ConfigKeysOf({"enabled", "ops"}, Settings()); }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    BandwidthConfig& bandwidth = probes.Of<BandwidthConfig>();
    s.Bool("enabled", bandwidth.enabled);
    // Spelled by their kernel names, as the --ops flag accepts them.
    std::vector<std::string_view> op_names;
    for (k::BandwidthOp op : k::kAllBandwidthOps) op_names.push_back(k::BandwidthOpName(op));
    std::vector<std::string> current;
    for (k::BandwidthOp op : bandwidth.ops) current.emplace_back(k::BandwidthOpName(op));
    if (auto ops = s.ChoiceList("ops", op_names, current)) {
      bandwidth.ops.clear();
      for (std::size_t i : *ops) bandwidth.ops.push_back(k::kAllBandwidthOps[i]);
    }
    ReadSetting(s, kBandwidthThreads, bandwidth.threads);
    ReadSetting(s, kBandwidthBuffer, bandwidth.buffer_bytes);
    ReadSetting(s, kBandwidthBurst, bandwidth.burst_bytes);
    ReadSetting(s, kBandwidthBursts, bandwidth.bursts);

    // The kernel's rotation rule (k::MinBandwidthBufferBytes), checked up front
    // so the operator sees the key. Checked only when its inputs parsed, to
    // avoid a second, confusing error.
    for (const char* key : {"threads", "buffer_size", "burst_size"}) {
      if (s.HasError(key)) return;
    }
    const std::uint64_t minimum =
        k::MinBandwidthBufferBytes(bandwidth.burst_bytes, static_cast<std::size_t>(bandwidth.threads));
    if (bandwidth.buffer_bytes < minimum) {
      // Blame the key the operator wrote: with only "threads: 8" set, that line.
      const char* key = "buffer_size";
      for (const char* written : {"buffer_size", "burst_size", "threads"}) {
        if (s.Has(written)) {
          key = written;
          break;
        }
      }
      s.Error(key, "buffer_size " + FormatSize(bandwidth.buffer_bytes) +
                       " must be at least 4 x burst_size x threads = " + FormatSize(minimum) +
                       ", so consecutive bursts touch different memory");
    }
  }
  std::vector<ConfiguredBuffer> ConfiguredBuffers(const Config& config) const override {
    return {{"buffer_size", config.probes.Of<BandwidthConfig>().buffer_bytes}};
  }

  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& settings, const k::Topology&) const override {
    std::vector<ProbeTarget> targets;
    for (const MemoryPair& pair : plan.memory_pairs) {
      for (k::BandwidthOp op : settings.Of<BandwidthSettings>().ops)
        targets.push_back(MemoryTarget(pair, std::string(k::BandwidthOpName(op))));
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("{} bandwidth cpu {} -> node {}", t.variant, t.pair.cpu, t.pair.mem_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::BandwidthResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Simulated(const ProbeTarget& t, k::Outcome outcome, double figure) const override {
    k::BandwidthResult result;
    result.outcome = outcome;
    result.bytes_per_second.median = figure;
    result.op = OpOf(t);
    return std::make_shared<ProbeRecordOf<k::BandwidthResult>>(*this, t, std::move(result));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    k::BandwidthResult result;
    result.op = OpOf(t);
    result.buffer.node = t.pair.mem_node;
    const ProbeLockHold hold = runner.Acquire(stop);
    // After the lock: the CPUs idle now, not before a wait.
    result.cpus = runner.ChooseCpus(t.pair, runner.settings().Of<BandwidthSettings>().threads);
    if (!runner.Cancelled(hold, result)) {
      auto buffer = StreamBuffer(runner, t.pair.mem_node);
      if (!buffer.ok()) {
        result.outcome = buffer.failure().outcome;
        result.reason = buffer.failure().reason;
      } else {
        k::BandwidthRunSpec spec = runner.settings().Of<BandwidthSettings>().spec;
        spec.cpus = result.cpus;
        spec.op = result.op;
        spec.stop = stop;
        result = k::MeasureBandwidth(*buffer.value(), spec);
        ScaleForTest(result.bytes_per_second, runner.settings().TestScaleOf(name()));
        if (IsPlacementOutcome(result.outcome)) DropStreamBuffer(runner, t.pair.mem_node);
      }
    }
    return std::make_shared<BandwidthRecord>(*this, t, std::move(result));
  }

  double FigureOf(const ProbeRecord& record) const override {
    return ResultOf<k::BandwidthResult>(record).bytes_per_second.median;
  }

  // Reads and non-temporal writes compare with the advertised read and write
  // bandwidth; a copy does both at once and has no advertised counterpart.
  std::optional<AdvertisedFigure> AdvertisedOf(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::BandwidthResult>(record);
    if (r.op == k::BandwidthOp::kRead)
      return AdvertisedFigure{HmatAttribute::kReadBandwidth, r.bytes_per_second.median};
    if (r.op == k::BandwidthOp::kWrite) {
      return AdvertisedFigure{HmatAttribute::kWriteBandwidth, r.bytes_per_second.median};
    }
    return std::nullopt;
  }
  std::string SettingsFingerprint(const Config& config) const override {
    const auto& b = config.probes.Of<BandwidthConfig>();
    return fmt::format("bandwidth.buffer={};bandwidth.burst={};bandwidth.bursts={};bandwidth.threads={}",
                       b.buffer_bytes, b.burst_bytes, b.bursts, b.threads);
  }
  // The threads label, exactly as on numaprobe_memory_bandwidth_bytes_per_second:
  // none when one thread is configured; as the figure: the threads that ran
  // for the same series, else the configured count; the baseline keeps no
  // thread count, so it is labelled with the configured one.
  void AddBaselineLabels(const BaselineValue& v, const std::vector<TimedRecord>& latest, const FigureContext& context,
                         bool as_figure, Labels& labels) const override {
    if (context.threads <= 1) return;
    std::size_t threads = static_cast<std::size_t>(context.threads);
    for (const TimedRecord& t : latest) {
      if (!as_figure) break;
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
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::BandwidthResult>(record);
    return {{"op", std::string(k::BandwidthOpName(r.op))},    {"page_size", k::PageSizeName(r.buffer)},
            {"buffer_bytes", std::to_string(r.buffer.bytes)}, {"burst_bytes", std::to_string(r.bytes_per_burst)},
            {"bursts", std::to_string(r.bytes_per_second.n)}, {"isa", std::string(k::IsaName(r.isa))},
            {"threads", std::to_string(r.cpus.size())}};
  }

  static std::vector<FamilySpec> FamilySpecs() {
    return {{"numaprobe_memory_bandwidth_bytes_per_second",
             std::string("Median memory bandwidth from CPUs of cpu_node to memory on mem_node by op (read, write, "
                         "copy; copy counts bytes read plus bytes written); a threads label, present when more than "
                         "one thread is configured, counts the threads that ran") +
                 kCachedHelp}};
  }

  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext& context,
                     FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const auto& r = ResultOf<k::BandwidthResult>(*t.record);
      const MemoryPair& p = t.record->target().pair;
      Labels labels{{"cpu_node", std::to_string(p.cpu_node)},
                    {"mem_node", std::to_string(p.mem_node)},
                    {"op", std::string(k::BandwidthOpName(r.op))}};
      if (context.per_cpu) labels["cpu"] = std::to_string(p.cpu);
      // `threads` only when more than one thread is configured, so
      // single-thread hosts keep plain {cpu_node,mem_node,op} series; it
      // counts the threads that ran (a node with fewer CPUs runs fewer).
      if (context.threads > 1) {
        labels["threads"] = std::to_string(r.cpus.empty() ? static_cast<std::size_t>(context.threads) : r.cpus.size());
      }
      sink.Add("numaprobe_memory_bandwidth_bytes_per_second", labels, r.bytes_per_second.median, t.unix_seconds);
    }
  }

  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    std::vector<ReportSection> sections;
    for (k::BandwidthOp op : kOps) {
      FailureNotes notes;
      MatrixSection matrix("");
      std::size_t threads = 0;
      std::string isa;
      for (const RecordPtr& record : records) {
        const auto& r = ResultOf<k::BandwidthResult>(*record);
        if (r.op != op) continue;
        const MemoryPair& p = record->target().pair;
        threads = std::max(threads, r.cpus.size());
        if (record->ok()) {
          matrix.Set(MatrixSection::RowLabel(p), p.mem_node, fmt::format("{:.2f}", r.bytes_per_second.median / 1e9));
          isa = k::IsaName(r.isa);
        } else {
          matrix.Set(MatrixSection::RowLabel(p), p.mem_node, notes.Add(Describe(record->target()), *record));
        }
      }
      if (matrix.empty()) continue;
      ReportSection section = matrix.Build(notes.notes());
      section.title = fmt::format("Memory bandwidth, {} (GB/s, median; {} thread{}, {})", k::BandwidthOpName(op),
                                  threads, threads == 1 ? "" : "s", isa.empty() ? "-" : isa);
      sections.push_back(std::move(section));
    }
    return sections;
  }

  void AddSettings(const Config& config, ProbeSettings& settings) const override {
    const BandwidthConfig& c = config.probes.Of<BandwidthConfig>();
    BandwidthSettings& s = settings.Of<BandwidthSettings>();
    s.spec.burst_bytes = c.burst_bytes;
    s.spec.bursts = c.bursts;
    s.threads = c.threads;
    s.ops = c.ops;
    s.buffer_bytes = c.buffer_bytes;
  }
  void AddFigureContext(const Config& config, FigureContext& context) const override {
    context.threads = config.probes.Of<BandwidthConfig>().threads;
  }

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    BandwidthSettings& s = settings.Of<BandwidthSettings>();
    flags.AddSetting(name(), kBandwidthBuffer, s.buffer_bytes);
    flags.AddSetting(name(), kBandwidthBurst, s.spec.burst_bytes);
    flags.AddSetting(name(), kBandwidthBursts, s.spec.bursts);
    flags.AddEnumList(
        "--ops", EnumByName(k::kAllBandwidthOps, k::BandwidthOpName),
        [&s](const std::vector<int>& ops) {
          s.ops.clear();
          for (int op : ops) s.ops.push_back(static_cast<k::BandwidthOp>(op));
        },
        "Bandwidth operations");
    flags.AddSetting(name(), kBandwidthThreads, s.threads_flag);
    flags.AddEnum(
        "--isa", EnumByName(k::kAllIsas, k::IsaName), [&s](int isa) { s.spec.isa = static_cast<k::Isa>(isa); },
        "Bandwidth: instruction set (auto never picks avx512 or sve)");
  }

  // The rotation rule of ReadConfig, over the flags.
  std::string FlagsProblem(const ProbeSettings& settings) const override {
    const BandwidthSettings& s = settings.Of<BandwidthSettings>();
    const std::uint64_t minimum = k::MinBandwidthBufferBytes(s.spec.burst_bytes, static_cast<std::size_t>(s.threads));
    if (s.buffer_bytes >= minimum) return "";
    return "--bandwidth-buffer " + FormatSize(s.buffer_bytes) +
           " must be at least 4 x --burst x --threads = " + FormatSize(minimum) +
           ", so consecutive bursts touch different memory";
  }

  // --threads is kept apart from the count so that the peak kind can tell a
  // chosen count from the default (kind_settings.h).
  void AfterFlags(ProbeSettings& settings) const override {
    BandwidthSettings& s = settings.Of<BandwidthSettings>();
    if (s.threads_flag > 0) s.threads = s.threads_flag;
  }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::BandwidthResult>(record);
    const MemoryPair& p = record.target().pair;
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpu", r.cpus.empty() ? p.cpu : r.cpus.front()},  // the CPU that measured
              {"planned_cpu", p.cpu},
              {"cpus", r.cpus},
              {"threads", r.cpus.size()},
              {"cpu_node", p.cpu_node},
              {"mem_node", p.mem_node},
              {"op", k::BandwidthOpName(r.op)},
              {"isa", k::IsaName(r.isa)},
              {"bytes_per_burst", r.bytes_per_burst},
              {"bytes_total", r.bytes_total},
              {"buffer", BufferToJson(r.buffer)}});
    j.update(StatsToJson(record.ok(), r.bytes_per_second, "bytes_per_second"));
    j["bursts"] = j["samples"];
    return j;
  }
};

}  // namespace

const ProbeKind& BandwidthProbe() {
  static const BandwidthKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
