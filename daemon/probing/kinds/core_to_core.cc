// The core_to_core kind: one-way cache-line transfer latency between two CPUs
// with the line homed on a chosen node (kernels/c2c.h). Its target's pair is
// (cpu_a, cpu_a's node, the line's node), so health series and placement
// failures are keyed like the memory kinds'; cpu_b is the target's peer CPU.
#include <fmt/format.h>

#include "daemon/probing/json_fields.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/probe_runner.h"
#include "daemon/probing/section_builder.h"
#include "kernels/c2c.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using C2cRecord = ProbeRecordOf<k::C2cResult>;

// The planned pair a target runs.
C2cPair PairOf(const ProbeTarget& t) { return {t.pair.cpu, t.peer_cpu, t.pair.mem_node, t.relation}; }

class CoreToCoreKind final : public ProbeKind {
 public:
  std::string_view name() const override { return "core_to_core"; }
  std::string_view title() const override { return "core-to-core latency"; }
  bool Enabled(const Config& config) const override { return config.core_to_core.enabled; }

  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings&, const k::Topology& topology) const override {
    std::vector<ProbeTarget> targets;
    for (const C2cPair& c2c : plan.c2c_pairs) {
      const k::CpuInfo* a = topology.FindCpu(c2c.cpu_a);
      targets.push_back({{c2c.cpu_a, a != nullptr ? a->node : -1, c2c.line_node}, c2c.cpu_b, c2c.relation, ""});
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("core-to-core cpu {} <-> cpu {}", t.pair.cpu, t.peer_cpu);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::C2cResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    k::C2cResult result;
    result.cpu_a = t.pair.cpu;
    result.cpu_b = t.peer_cpu;
    result.line.node = t.pair.mem_node;
    const ProbeLockHold hold = runner.Acquire(stop);
    if (!runner.Cancelled(hold, result)) {
      k::C2cSpec spec = runner.settings().c2c;
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
    return {{"page_size", std::string(k::PageKindName(r.line.page_kind))},
            {"buffer_bytes", std::to_string(r.line.bytes)},
            {"round_trips", std::to_string(r.round_trips)},
            {"samples", std::to_string(r.one_way_seconds.n)}};
  }

  std::vector<FamilySpec> Families() const override {
    return {{"numaprobe_core_to_core_latency_seconds",
             std::string("Median one-way cache-line transfer latency between cpu_a and cpu_b with the line homed on "
                         "line_node; relation is smt, same_llc, same_node or cross_node") +
                 kCachedHelp}};
  }

  void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext&, FigureSink& sink) const override {
    for (const TimedRecord& t : latest) {
      const C2cPair p = PairOf(t.record->target());
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
      const C2cPair p = PairOf(record->target());
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

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    flags.AddInt("--round-trips", settings.c2c.round_trips, 10, 10'000'000, "Core-to-core: round trips per sample");
  }
  // --samples (the latency kind's flag) counts core-to-core samples too.
  void AfterFlags(ProbeSettings& settings) const override { settings.c2c.samples = settings.latency.samples; }

  nlohmann::json ToJson(const ProbeRecord& record) const override {
    const auto& r = ResultOf<k::C2cResult>(record);
    const C2cPair p = PairOf(record.target());
    nlohmann::json j = CommonToJson(record);
    j.update({{"cpu_a", p.cpu_a},
              {"cpu_b", p.cpu_b},
              {"line_node", p.line_node},
              {"relation", k::CpuRelationName(p.relation)},
              {"round_trips", r.round_trips},
              {"line", BufferToJson(r.line)}});
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
