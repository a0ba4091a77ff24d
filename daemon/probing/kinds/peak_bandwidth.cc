// SPDX-License-Identifier: Apache-2.0
// The peak bandwidth kind (Intel MLC --bandwidth_matrix): every allowed CPU
// of cpu_node (or `threads` of them; never an isolated or nohz_full one,
// probing/cpu_chooser.h) streams at once to a buffer on mem_node, read and
// non-temporal write, with the bandwidth kernel (kernels/bandwidth.h) the
// bandwidth kind runs with one thread. One core's bandwidth is bounded by
// the loads it keeps in flight, not by the memory: a lost channel or a
// degraded link between sockets shows only here.
//
// `numaprobe probe --tests peak_bandwidth` measures the whole matrix when
// asked. The daemon (probes.peak_bandwidth.enabled) measures each node's own
// memory (a lost channel) and one remote node per distance (a degraded link),
// on a schedule of its own in hours with a CPU budget of its own
// (serve/own_schedule.h), and only when the node's CPUs are idle enough
// (probing/idle_gate.h): a run loads every CPU of a node and its memory.
// There it streams from as many CPUs as saturate the node's memory, found
// once per series (kinds/peak_thread_search.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "daemon/config/config_values.h"
#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/memory_buffers.h"
#include "daemon/probing/kinds/peak_stream.h"
#include "daemon/probing/kinds/peak_thread_search.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "kernels/bandwidth.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using PeakRecord = ProbeRecordOf<PeakResult>;

constexpr k::BandwidthOp kPeakOps[] = {k::BandwidthOp::kRead, k::BandwidthOp::kWrite};

// Its settings. On the command line it shares --threads, --bursts, --isa
// and --bandwidth-buffer with the bandwidth kind (AfterFlags): its own flag
// is --peak-burst.
constexpr KindSetting kPeakBurst{"burst_size",
                                 "--peak-burst",
                                 64 * 1024,
                                 kMaxConfigSizeBytes,
                                 true,
                                 WholeCacheLinesRule,
                                 "Peak bandwidth: bytes all threads move together per burst, e.g. 64MiB"};
constexpr KindSetting kPeakThreads{
    "threads",
    "",
    0,
    1024,
    false,
    nullptr,
    "Peak bandwidth: CPUs of each node that stream (0: as many as saturate its memory, searched once per series)"};
constexpr KindSetting kPeakBursts{"bursts", "", 1, 1000, false, nullptr, "Peak bandwidth: bursts per estimate"};
constexpr KindSetting kPeakBuffer{"buffer_size",
                                  "",
                                  0,
                                  kMaxConfigSizeBytes,
                                  true,
                                  nullptr,
                                  "Peak bandwidth: least buffer size per node, e.g. 256MiB"};

k::BandwidthOp PeakOpOf(const ProbeTarget& t) {
  for (k::BandwidthOp op : kPeakOps) {
    if (k::BandwidthOpName(op) == t.variant) return op;
  }
  return k::BandwidthOp::kRead;
}

// "node 1 (4 CPUs)": a row is a node's CPUs, not one CPU.
std::string NodeRow(int cpu_node, std::size_t cpus) {
  return fmt::format("node {} ({} CPU{})", cpu_node, cpus, cpus == 1 ? "" : "s");
}

// The daemon's pairs: per CPU node its own memory and, per firmware distance,
// the first remote node at it (in the plan's order); `numaprobe probe` every
// pair. Per-CPU plans that name several CPUs of a node measure it once.
std::vector<MemoryPair> PeakPairs(const Plan& plan, bool whole_matrix, const k::Topology& topology) {
  std::vector<MemoryPair> pairs;
  std::set<std::pair<int, int>> seen;
  std::set<std::pair<int, int>> distances;  // (cpu_node, distance) with a remote pair
  for (const MemoryPair& pair : plan.memory_pairs) {
    if (!seen.insert({pair.cpu_node, pair.mem_node}).second) continue;
    if (!whole_matrix && pair.mem_node != pair.cpu_node &&
        !distances.insert({pair.cpu_node, topology.Distance(pair.cpu_node, pair.mem_node)}).second) {
      continue;
    }
    pairs.push_back(pair);
  }
  return pairs;
}

double PerThread(const k::BandwidthResult& r) {
  return r.cpus.empty() ? 0 : r.bytes_per_second.median / static_cast<double>(r.cpus.size());
}

class PeakBandwidthKind final : public ProbeKind, public KindCommandLine {
 public:
  PeakBandwidthKind()
      : ProbeKind({.title = "peak memory bandwidth",
                   .runs_by_default = false,
                   .has_baseline = true,
                   .baseline_names = {"numaprobe_memory_peak_bandwidth", "bytes_per_second"},
                   // A figure more than 8% under its baseline is confirmed by more runs at
                   // once: the band is the alert's threshold (peakBandwidthDropThreshold), so
                   // a figure that could move the median across it is decided by fresh runs
                   // within minutes. Simulated against -10% and -6% (bench/peak_band.py,
                   // docs/detection.md): fewest false alarms, a lost channel of 8 caught at
                   // its first run 98% of the time.
                   .confirmation_band = 0.08,
                   .regression = Regression::kLowerIsWorse,
                   .test_scaled = true,
                   .families = FamilySpecs()}) {}
  // Its flags: the KindCommandLine methods below.
  const KindCommandLine& command_line() const override { return *this; }

  std::string_view name() const override { return "peak_bandwidth"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<PeakBandwidthConfig>().enabled; }

  std::vector<KindSetting> Settings() const override { return {kPeakThreads, kPeakBuffer, kPeakBurst, kPeakBursts}; }
  std::vector<std::string_view> ConfigKeys() const override {
    return ConfigKeysOf({"enabled", "interval", "duty_cycle", "max_busy"}, Settings());
  }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    PeakBandwidthConfig& peak = probes.Of<PeakBandwidthConfig>();
    s.Bool("enabled", peak.enabled);
    s.Duration("interval", std::chrono::minutes(1), std::chrono::hours(24 * 7), peak.interval);
    s.Number("duty_cycle", 0.00001, 0.5, peak.duty_cycle);
    s.Number("max_busy", 0, 1, peak.max_busy);
    ReadSetting(s, kPeakThreads, peak.threads);
    ReadSetting(s, kPeakBuffer, peak.buffer_bytes);
    ReadSetting(s, kPeakBurst, peak.burst_bytes);
    ReadSetting(s, kPeakBursts, peak.bursts);
  }

  std::optional<OwnSchedule> OwnScheduleOf(const Config& config) const override {
    const PeakBandwidthConfig& c = config.probes.Of<PeakBandwidthConfig>();
    return OwnSchedule{c.interval, c.duty_cycle};
  }

  // One run per pair (PeakPairs) and op: the row is the node's CPUs.
  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& settings,
                                   const k::Topology& topology) const override {
    const PeakBandwidthSettings& s = settings.Of<PeakBandwidthSettings>();
    std::vector<ProbeTarget> targets;
    for (const MemoryPair& pair : PeakPairs(plan, s.whole_matrix, topology)) {
      for (k::BandwidthOp op : s.ops) targets.push_back(MemoryTarget(pair, std::string(k::BandwidthOpName(op))));
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("peak {} bandwidth node {} -> node {}", t.variant, t.pair.cpu_node, t.pair.mem_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<PeakResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    const PeakBandwidthSettings& settings = runner.settings().Of<PeakBandwidthSettings>();
    PeakResult result;
    result.op = PeakOpOf(t);
    result.buffer.node = t.pair.mem_node;
    const auto done = [&] { return std::make_shared<PeakRecord>(*this, t, std::move(result)); };
    const ProbeLockHold hold = runner.Acquire(stop);
    // The first n of the usable CPUs are the n that stream.
    if (!PeakStreamMayStart(runner, hold, t.pair, settings, result)) return done();
    const std::vector<int> usable = result.cpus;
    // Sized for every usable CPU, so that a search's smaller counts fit too.
    auto buffer = PeakStreamBuffer(runner, t.pair.mem_node, PeakBufferBytes(settings, usable.size()));
    if (!buffer.ok()) {
      result.outcome = buffer.failure().outcome;
      result.reason = buffer.failure().reason;
      return done();
    }
    const std::optional<int> found = runner.found_threads();
    if (!settings.search_threads) {
      static_cast<k::BandwidthResult&>(result) =
          Measure(runner, *buffer.value(), usable, usable.size(), result.op, stop);
    } else if (found && static_cast<std::size_t>(*found) <= usable.size()) {
      static_cast<k::BandwidthResult&>(result) = Measure(runner, *buffer.value(), usable, *found, result.op, stop);
    } else {
      // None found yet, or more than this node has now (its cpuset shrank).
      result = Search(runner, *buffer.value(), usable, result.op, stop);
      if (result.found_threads) {
        spdlog::info(
            "{}: thread search: {} of {} CPUs (cpus {}), the count after the first within {:.0f}% of the best: {}",
            Describe(t), *result.found_threads, usable.size(), fmt::join(result.cpus, ","), kPeakShare * 100,
            DescribeTrials(result.search));
      }
    }
    if (IsPlacementOutcome(result.outcome)) DropPeakStreamBuffer(runner, t.pair.mem_node);
    return done();
  }

  RecordPtr Simulated(const ProbeTarget& t, k::Outcome outcome, double figure) const override {
    PeakResult result;
    result.outcome = outcome;
    result.bytes_per_second.median = figure;
    result.op = PeakOpOf(t);
    return std::make_shared<PeakRecord>(*this, t, std::move(result));
  }

  // One series per (CPU node, memory node) and op, per-CPU mode or not: the
  // figure is the node's, not one CPU's.
  SeriesKey SeriesOf(const ProbeTarget& t, bool /*per_cpu*/) const override {
    return SeriesKey{std::string(name()), -1, t.pair.cpu_node, t.pair.mem_node, t.variant};
  }
  double FigureOf(const ProbeRecord& record) const override {
    return ResultOf<PeakResult>(record).bytes_per_second.median;
  }
  std::optional<int> FoundThreadsOf(const ProbeRecord& record) const override {
    return ResultOf<PeakResult>(record).found_threads;
  }
  std::string SettingsFingerprint(const Config& config) const override {
    const auto& c = config.probes.Of<PeakBandwidthConfig>();
    return fmt::format(
        "peak_bandwidth.threads={};peak_bandwidth.buffer={};peak_bandwidth.burst={};"
        "peak_bandwidth.bursts={}",
        c.threads, c.buffer_bytes, c.burst_bytes, c.bursts);
  }
  // The node's peak is what the firmware's bandwidth and the kernel's
  // interleave weights describe (output/interleave_weights.h).
  std::optional<AdvertisedFigure> AdvertisedOf(const ProbeRecord& record) const override {
    const auto& r = ResultOf<PeakResult>(record);
    if (r.op == k::BandwidthOp::kRead) return AdvertisedFigure{HmatAttribute::kReadBandwidth, FigureOf(record), true};
    if (r.op == k::BandwidthOp::kWrite) return AdvertisedFigure{HmatAttribute::kWriteBandwidth, FigureOf(record), true};
    return std::nullopt;
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<PeakResult>(record);
    return {{"op", std::string(k::BandwidthOpName(r.op))},    {"page_size", k::PageSizeName(r.buffer)},
            {"buffer_bytes", std::to_string(r.buffer.bytes)}, {"burst_bytes", std::to_string(r.bytes_per_burst)},
            {"bursts", std::to_string(r.bytes_per_second.n)}, {"isa", std::string(k::IsaName(r.isa))}};
  }

  // The figure is labelled like its baseline (cpu_node, mem_node, op), so
  // that rules divide one by the other; how many CPUs streamed is a family of
  // its own, since it differs between nodes.
  static std::vector<FamilySpec> FamilySpecs() {
    return {{"numaprobe_memory_peak_bandwidth_bytes_per_second",
             std::string("Median memory bandwidth of CPUs of cpu_node streaming at once to memory on mem_node, by op "
                         "(read, write): the node's peak, which a lost memory channel or a degraded link lowers. As "
                         "many CPUs stream as saturate its memory (searched once per series and kept "
                         "with its baseline), or probes.peak_bandwidth.threads of them; measured every "
                         "probes.peak_bandwidth.interval on idle nodes only") +
                 kCachedHelp},
            {"numaprobe_memory_peak_bandwidth_threads",
             std::string("CPUs that streamed together for numaprobe_memory_peak_bandwidth_bytes_per_second of the same "
                         "labels") +
                 kCachedHelp}};
  }
  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext&, FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const auto& r = ResultOf<PeakResult>(*t.record);
      const MemoryPair& p = t.record->target().pair;
      const Labels labels{{"cpu_node", std::to_string(p.cpu_node)},
                          {"mem_node", std::to_string(p.mem_node)},
                          {"op", std::string(k::BandwidthOpName(r.op))}};
      sink.Add("numaprobe_memory_peak_bandwidth_bytes_per_second", labels, r.bytes_per_second.median, t.unix_seconds);
      sink.Add("numaprobe_memory_peak_bandwidth_threads", labels, static_cast<double>(r.cpus.size()), t.unix_seconds);
    }
  }

  // MLC's matrix: a row per CPU node (all its CPUs), a column per memory
  // node, one matrix per op.
  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    std::vector<ReportSection> sections;
    for (k::BandwidthOp op : kPeakOps) {
      FailureNotes notes;
      MatrixSection matrix("", "cpus \\ memory");
      std::string isa;
      for (const RecordPtr& record : records) {
        const auto& r = ResultOf<PeakResult>(*record);
        if (r.op != op) continue;
        const MemoryPair& p = record->target().pair;
        const std::string row = NodeRow(p.cpu_node, r.cpus.size());
        if (record->ok()) {
          matrix.Set(row, p.mem_node, fmt::format("{:.2f}", r.bytes_per_second.median / 1e9));
          isa = k::IsaName(r.isa);
        } else {
          matrix.Set(row, p.mem_node, notes.Add(Describe(record->target()), *record));
        }
      }
      if (matrix.empty()) continue;
      ReportSection section = matrix.Build(notes.notes());
      section.title = fmt::format("Peak memory bandwidth, {} (GB/s, median; all threads together, {})",
                                  k::BandwidthOpName(op), isa.empty() ? "-" : isa);
      sections.push_back(std::move(section));
    }
    return sections;
  }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<PeakResult>(record);
    const MemoryPair& p = record.target().pair;
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpus", r.cpus},
              {"threads", r.cpus.size()},
              {"cpu_node", p.cpu_node},
              {"mem_node", p.mem_node},
              {"op", k::BandwidthOpName(r.op)},
              {"isa", k::IsaName(r.isa)},
              {"bytes_per_burst", r.bytes_per_burst},
              {"bytes_total", r.bytes_total},
              {"buffer", BufferToJson(r.buffer)}});
    j.update(StatsToJson(record.ok(), r.bytes_per_second, "bytes_per_second"));
    j["per_thread_bytes_per_second"] = record.ok() ? nlohmann::json(PerThread(r)) : nlohmann::json(nullptr);
    j["bursts"] = j["samples"];
    return j;
  }

  void AddSettings(const Config& config, ProbeSettings& settings) const override {
    const PeakBandwidthConfig& c = config.probes.Of<PeakBandwidthConfig>();
    PeakBandwidthSettings& s = settings.Of<PeakBandwidthSettings>();
    s.threads = c.threads;
    s.spec.burst_bytes = c.burst_bytes;
    s.spec.bursts = c.bursts;
    s.buffer_bytes = c.buffer_bytes;
    s.max_busy = c.max_busy;
    s.whole_matrix = false;
    s.search_threads = c.threads == 0;
  }

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    flags.AddSetting(name(), kPeakBurst, settings.Of<PeakBandwidthSettings>().spec.burst_bytes);
  }
  // At a terminal: the whole matrix, measured when asked (no idle gate), with
  // the bandwidth kind's --threads (as given: its absence means every CPU
  // here), --bursts, --isa and --bandwidth-buffer (the least buffer).
  void AfterFlags(ProbeSettings& settings) const override {
    const BandwidthSettings& bandwidth = settings.Of<BandwidthSettings>();
    PeakBandwidthSettings& peak = settings.Of<PeakBandwidthSettings>();
    peak.whole_matrix = true;
    peak.max_busy.reset();
    peak.threads = bandwidth.threads_flag;
    peak.spec.bursts = bandwidth.spec.bursts;
    peak.spec.isa = bandwidth.spec.isa;
    peak.buffer_bytes = bandwidth.buffer_bytes;
    peak.search_threads = false;
  }

 private:
  // The first `count` of `cpus` streaming together.
  k::BandwidthResult Measure(ProbeRunner& runner, k::BandwidthBuffer& buffer, const std::vector<int>& cpus,
                             std::size_t count, k::BandwidthOp op, const std::atomic<bool>* stop) const {
    return MeasurePeakStream(runner, buffer, cpus, count, op, runner.settings().TestScaleOf(name()), stop);
  }

  // Measures the counts of SearchCounts until FoundThreads decides; the
  // figure is the found count's. A trial that is not ok ends the search with
  // its outcome (nothing is found: the next run searches again). Its CPU
  // time is every trial's.
  PeakResult Search(ProbeRunner& runner, k::BandwidthBuffer& buffer, const std::vector<int>& cpus, k::BandwidthOp op,
                    const std::atomic<bool>* stop) const {
    PeakResult result;
    k::BandwidthResult every_cpu;
    double cpu_seconds = 0;
    for (std::size_t count : SearchCounts(cpus.size())) {
      k::BandwidthResult trial = Measure(runner, buffer, cpus, count, op, stop);
      cpu_seconds += trial.cpu_seconds;
      if (trial.outcome != k::Outcome::kOk) {
        static_cast<k::BandwidthResult&>(result) = std::move(trial);
        result.reason = fmt::format("thread search, {} CPUs: {}", count, result.reason);
        break;
      }
      result.search.push_back({count, trial.bytes_per_second.median});
      const std::size_t found = FoundThreads(result.search, cpus.size());
      if (count == cpus.size()) every_cpu = trial;
      if (found == 0) continue;
      static_cast<k::BandwidthResult&>(result) = found == count ? std::move(trial) : std::move(every_cpu);
      result.found_threads = static_cast<int>(found);
      break;
    }
    result.cpu_seconds = cpu_seconds;
    return result;
  }
};

}  // namespace

const ProbeKind& PeakBandwidthProbe() {
  static const PeakBandwidthKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
