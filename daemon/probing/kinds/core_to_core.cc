// SPDX-License-Identifier: Apache-2.0
// The core_to_core kind: one-way cache-line transfer latency between two CPUs
// with the line homed on a chosen node (kernels/c2c.h). It plans its own
// targets, CPU pairs (core_to_core_plan.h), from the topology and its target
// option `c2c_cpus` (the configuration's targets.c2c_cpus, --c2c-cpus).
#include <fmt/format.h>

#include <chrono>

#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/core_to_core_plan.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "kernels/c2c.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using C2cRecord = ProbeRecordOf<k::C2cResult>;

// The target option's key under `targets` (its flag: --c2c-cpus).
constexpr const char* kC2cCpusOption = "c2c_cpus";

// How long one pair's run may take before it ends with outcome timeout, in
// the configuration (run_timeout_ms) and on the command line
// (--c2c-timeout-ms) alike. Both CPUs must run at once for a round trip: on
// a host (or an emulator) that cannot give them that, a run fails rather
// than waits without bound; a test in a slow guest raises the limit instead
// of depending on the guest's speed.
constexpr KindSetting kC2cSamples{
    "samples", "", 1, kMaxSamplesPerPair, false, nullptr, "Core-to-core: accepted samples per pair (set by --samples)"};
// At most what one sample can bounce within its 50 ms (k::C2cSpec::sample_timeout)
// at 500 ns a round trip between sockets.
constexpr KindSetting kC2cRoundTrips{
    "round_trips", "--round-trips", 10, 100'000, false, nullptr, "Core-to-core: round trips per sample"};
constexpr KindSetting kC2cRunTimeout{"run_timeout_ms",
                                     "--c2c-timeout-ms",
                                     100,
                                     600'000,
                                     false,
                                     nullptr,
                                     "Core-to-core: a pair's run ends with outcome timeout after this many ms"};

// A pair's fields, in the plan's JSON and in each record's.
nlohmann::json PairToJson(const C2cPair& p) {
  return {{"cpu_a", p.cpu_a},
          {"cpu_b", p.cpu_b},
          {"line_node", p.line_node},
          {"relation", k::CpuRelationName(p.relation)}};
}

class CoreToCoreKind final : public ProbeKind, public KindCommandLine {
 public:
  CoreToCoreKind() : ProbeKind({.title = "core-to-core latency", .families = FamilySpecs()}) {}
  // Its flags: the KindCommandLine methods below.
  const KindCommandLine& command_line() const override { return *this; }

  std::string_view name() const override { return "core_to_core"; }
  bool Enabled(const Config& config) const override { return config.probes.Of<CoreToCoreConfig>().enabled; }

  std::vector<KindSetting> Settings() const override { return {kC2cSamples, kC2cRoundTrips, kC2cRunTimeout}; }
  std::vector<std::string_view> ConfigKeys() const override { return ConfigKeysOf({"enabled"}, Settings()); }
  void ReadConfig(SectionKeys& s, TypedValues& probes) const override {
    CoreToCoreConfig& c2c = probes.Of<CoreToCoreConfig>();
    s.Bool("enabled", c2c.enabled);
    ReadSetting(s, kC2cSamples, c2c.samples);
    ReadSetting(s, kC2cRoundTrips, c2c.round_trips);
    ReadSetting(s, kC2cRunTimeout, c2c.run_timeout_ms);
  }
  // targets.c2c_cpus (PlanOptions::kind_cpus): the CPUs whose pairs are measured.
  std::vector<std::string_view> TargetKeys() const override { return {kC2cCpusOption}; }
  void ReadTargets(SectionKeys& targets, PlanOptions& options) const override {
    std::vector<int> pair_cpus = options.KindCpus(kC2cCpusOption);
    targets.IdList(kC2cCpusOption, pair_cpus);
    if (pair_cpus.size() == 1) {
      targets.Error(kC2cCpusOption, "needs at least two CPUs (pairs of them are measured), or none for automatic");
    }
    options.SetKindCpus(kC2cCpusOption, std::move(pair_cpus));
  }

  k::Expected<std::vector<ProbeTarget>> PlanTargets(const PlanOptions& options, const k::Topology& topology,
                                                    std::vector<std::string>& notes) const override {
    auto pairs = PlanC2cPairs(options.KindCpus(kC2cCpusOption), topology, notes);
    if (!pairs.ok()) return pairs.failure();
    std::vector<ProbeTarget> targets;
    for (const C2cPair& pair : pairs.value()) targets.push_back(C2cTarget(pair, topology.FindCpu(pair.cpu_a)->node));
    return targets;
  }
  void RegisterPlanFlags(FlagRegistry& flags, PlanOptions& options) const override {
    flags.AddCpuList(
        "--c2c-cpus", [&options](std::vector<int> cpus) { options.SetKindCpus(kC2cCpusOption, std::move(cpus)); },
        "CPUs whose pairs run the core-to-core probe (default: one pair per relation)");
  }
  // "c2c_pairs" as it always was: tests and tools read the plan from it.
  nlohmann::json PlannedToJson(const std::vector<ProbeTarget>& planned) const override {
    nlohmann::json pairs = nlohmann::json::array();
    for (const ProbeTarget& target : planned) pairs.push_back(PairToJson(C2cPairOf(target)));
    return {{"c2c_pairs", std::move(pairs)}};
  }
  std::string PlannedToText(const std::vector<ProbeTarget>& planned) const override {
    std::string out = "core-to-core pairs:";
    for (const ProbeTarget& target : planned) {
      const C2cPair p = C2cPairOf(target);
      out +=
          fmt::format(" {}<->{} ({}, line on node {})", p.cpu_a, p.cpu_b, k::CpuRelationName(p.relation), p.line_node);
    }
    return out;
  }
  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings&, const k::Topology&) const override {
    return plan.TargetsOf(name());
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("core-to-core cpu {} <-> cpu {}", t.pair.cpu, t.peer_cpu);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::C2cResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Simulated(const ProbeTarget& t, k::Outcome outcome, double figure) const override {
    k::C2cResult result;
    result.outcome = outcome;
    result.one_way_seconds.median = figure;
    return std::make_shared<ProbeRecordOf<k::C2cResult>>(*this, t, std::move(result));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    k::C2cResult result;
    result.cpu_a = t.pair.cpu;
    result.cpu_b = t.peer_cpu;
    result.line.node = t.pair.mem_node;
    const ProbeLockHold hold = runner.Acquire(stop);
    if (!runner.Cancelled(hold, result)) {
      k::C2cSpec spec = runner.settings().Of<CoreToCoreSettings>().spec;
      spec.cpu_a = t.pair.cpu;
      spec.cpu_b = t.peer_cpu;
      spec.line_node = t.pair.mem_node;
      spec.stop = stop;
      result = k::MeasureCoreToCore(spec);
    }
    return std::make_shared<C2cRecord>(*this, t, std::move(result));
  }

  Labels ConfigInfo(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::C2cResult>(record);
    return {{"page_size", k::PageSizeName(r.line)},
            {"buffer_bytes", std::to_string(r.line.bytes)},
            {"round_trips", std::to_string(r.round_trips)},
            {"samples", std::to_string(r.one_way_seconds.n)}};
  }

  static std::vector<FamilySpec> FamilySpecs() {
    return {{"numaprobe_core_to_core_latency_seconds",
             std::string("Median one-way cache-line transfer latency between cpu_a and cpu_b with the line homed on "
                         "line_node; relation is smt, same_llc, same_node or cross_node") +
                 kCachedHelp}};
  }

  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext&, FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const C2cPair p = C2cPairOf(t.record->target());
      sink.Add("numaprobe_core_to_core_latency_seconds",
               {{"cpu_a", std::to_string(p.cpu_a)},
                {"cpu_b", std::to_string(p.cpu_b)},
                {"line_node", std::to_string(p.line_node)},
                {"relation", std::string(k::CpuRelationName(p.relation))}},
               ResultOf<k::C2cResult>(*t.record).one_way_seconds.median, t.unix_seconds);
    }
  }

  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    if (records.empty()) return {};
    FailureNotes notes;
    ReportSection section{"Core-to-core latency (ns, one way = round trip / 2, median)",
                          "cpu_a",
                          {"cpu_b", "line_node", "relation", "one-way", "MAD"},
                          {},
                          {},
                          {}};
    for (const RecordPtr& record : records) {
      const auto& r = ResultOf<k::C2cResult>(*record);
      const C2cPair p = C2cPairOf(record->target());
      const bool ok = record->ok();
      section.row_labels.push_back(std::to_string(p.cpu_a));
      section.cells.push_back(
          {std::to_string(p.cpu_b), std::to_string(p.line_node), std::string(k::CpuRelationName(p.relation)),
           ok ? fmt::format("{:.1f}", r.one_way_seconds.median * 1e9) : notes.Add(Describe(record->target()), *record),
           ok ? fmt::format("{:.1f}", r.one_way_seconds.mad * 1e9) : ""});
    }
    section.notes = notes.notes();
    return {section};
  }

  void AddSettings(const Config& config, ProbeSettings& settings) const override {
    CoreToCoreSettings& s = settings.Of<CoreToCoreSettings>();
    s.spec.samples = config.probes.Of<CoreToCoreConfig>().samples;
    s.spec.round_trips = config.probes.Of<CoreToCoreConfig>().round_trips;
    s.run_timeout_ms = config.probes.Of<CoreToCoreConfig>().run_timeout_ms;
    s.spec.total_timeout = std::chrono::milliseconds(s.run_timeout_ms);
  }

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    flags.AddSetting(name(), kC2cRoundTrips, settings.Of<CoreToCoreSettings>().spec.round_trips);
    flags.AddSetting(name(), kC2cRunTimeout, settings.Of<CoreToCoreSettings>().run_timeout_ms);
  }
  // --samples (the latency kind's flag) counts core-to-core samples too.
  void AfterFlags(ProbeSettings& settings) const override {
    CoreToCoreSettings& c2c = settings.Of<CoreToCoreSettings>();
    c2c.spec.samples = settings.Of<LatencySettings>().spec.samples;
    c2c.spec.total_timeout = std::chrono::milliseconds(c2c.run_timeout_ms);
  }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::C2cResult>(record);
    nlohmann::json j = CommonToJson(record);
    j.update(PairToJson(C2cPairOf(record.target())));
    j.update({{"round_trips", r.round_trips}, {"line", BufferToJson(r.line)}});
    j.update(StatsToJson(record.ok(), r.one_way_seconds, "seconds"));
    return j;
  }
};

}  // namespace

const ProbeKind& CoreToCoreProbe() {
  static const CoreToCoreKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
