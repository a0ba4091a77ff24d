// SPDX-License-Identifier: Apache-2.0
// The peak bandwidth kind (Intel MLC --bandwidth_matrix): every allowed CPU
// of cpu_node (or --threads of them; never an isolated or nohz_full one,
// probing/cpu_chooser.h) streams at once to a buffer on
// mem_node, read and non-temporal write, with the bandwidth kernel
// (kernels/bandwidth.h) the bandwidth kind runs with one thread. One core's
// bandwidth is bounded by the loads it keeps in flight, not by the memory: a
// lost channel or a degraded link between sockets shows only here.
//
// On demand: `numaprobe probe --tests peak_bandwidth`. The daemon does not
// schedule it: a run loads every CPU of a node and its memory for the whole
// run, which on a fleet host needs an idle gate, a schedule in hours and a
// budget of its own first. Its section therefore refuses `enabled: true`
// with that reason, and it publishes no figures.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

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
using PeakRecord = ProbeRecordOf<k::BandwidthResult>;

constexpr k::BandwidthOp kPeakOps[] = {k::BandwidthOp::kRead, k::BandwidthOp::kWrite};

// Its one setting of its own; --threads, --bursts, --isa and
// --bandwidth-buffer are the bandwidth kind's, which it shares (AfterFlags).
constexpr KindSetting kPeakBurst{"",
                                 "--peak-burst",
                                 64 * 1024,
                                 kMaxConfigSizeBytes,
                                 true,
                                 WholeCacheLinesRule,
                                 "Peak bandwidth: bytes all threads move together per burst, e.g. 128MiB"};

// Each thread's share of a burst: whole lines, at least 1 MiB so that a
// thread's part is long beside the barrier between bursts.
std::size_t PeakBurstPerThread(std::size_t burst_bytes, std::size_t threads) {
  constexpr std::size_t kMinPerThread = std::size_t{1} << 20;
  return std::max(kMinPerThread, burst_bytes / std::max<std::size_t>(threads, 1) / 64 * 64);
}

// The buffer holds four bursts of every thread, and at least the bandwidth
// kind's buffer (--bandwidth-buffer), so that it is far larger than any LLC.
// Up to 128 threads it has one size, so CPU nodes of different sizes share
// each memory node's buffer.
std::size_t PeakBufferBytes(const PeakBandwidthSettings& settings, std::size_t threads) {
  return std::max(settings.buffer_bytes,
                  k::MinBandwidthBufferBytes(PeakBurstPerThread(settings.spec.burst_bytes, threads), threads));
}

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

double PerThread(const k::BandwidthResult& r) {
  return r.cpus.empty() ? 0 : r.bytes_per_second.median / static_cast<double>(r.cpus.size());
}

class PeakBandwidthKind final : public ProbeKind {
 public:
  std::string_view name() const override { return "peak_bandwidth"; }
  std::string_view title() const override { return "peak memory bandwidth"; }
  bool RunsByDefault() const override { return false; }
  bool Enabled(const Config&) const override { return false; }

  std::vector<KindSetting> Settings() const override { return {kPeakBurst}; }
  std::vector<std::string_view> ConfigKeys() const override { return ConfigKeysOf({"enabled"}, Settings()); }
  void ReadConfig(SectionKeys& s, TypedValues&) const override {
    bool enabled = false;
    s.Bool("enabled", enabled);
    if (enabled) {
      s.Error("enabled",
              "the daemon does not schedule peak_bandwidth: a run loads every CPU of a node and its memory, which "
              "needs an idle gate and a schedule in hours first; measure it with `numaprobe probe --tests "
              "peak_bandwidth`");
    }
  }

  // One run per (CPU node, memory node) and op: the row is the node's CPUs,
  // so per-CPU plans that name several CPUs of a node measure it once.
  std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& settings, const k::Topology&) const override {
    std::vector<ProbeTarget> targets;
    std::set<std::pair<int, int>> seen;
    for (const MemoryPair& pair : plan.memory_pairs) {
      if (!seen.insert({pair.cpu_node, pair.mem_node}).second) continue;
      for (k::BandwidthOp op : settings.Of<PeakBandwidthSettings>().ops)
        targets.push_back(MemoryTarget(pair, std::string(k::BandwidthOpName(op))));
    }
    return targets;
  }

  std::string Describe(const ProbeTarget& t) const override {
    return fmt::format("peak {} bandwidth node {} -> node {}", t.variant, t.pair.cpu_node, t.pair.mem_node);
  }

  RecordPtr NotRun(const ProbeTarget& t, k::Outcome outcome, std::string reason) const override {
    return NotRunRecord<k::BandwidthResult>(*this, t, outcome, std::move(reason));
  }
  RecordPtr Run(ProbeRunner& runner, const ProbeTarget& t, const std::atomic<bool>* stop) const override {
    const PeakBandwidthSettings& settings = runner.settings().Of<PeakBandwidthSettings>();
    k::BandwidthResult result;
    result.op = PeakOpOf(t);
    result.buffer.node = t.pair.mem_node;
    const ProbeLockHold hold = runner.Acquire(stop);
    // After the lock; the pair's CPU first, then the node's other allowed
    // CPUs, distinct cores first.
    result.cpus = runner.ChooseCpus(t.pair, settings.threads > 0 ? settings.threads : 1 << 20);
    if (!runner.Cancelled(hold, result)) {
      auto buffer = PeakStreamBuffer(runner, t.pair.mem_node, PeakBufferBytes(settings, result.cpus.size()));
      if (!buffer.ok()) {
        result.outcome = buffer.failure().outcome;
        result.reason = buffer.failure().reason;
      } else {
        k::BandwidthRunSpec spec = settings.spec;
        spec.burst_bytes = PeakBurstPerThread(settings.spec.burst_bytes, result.cpus.size());
        spec.cpus = result.cpus;
        spec.op = result.op;
        spec.stop = stop;
        result = k::MeasureBandwidth(*buffer.value(), spec);
        if (IsPlacementOutcome(result.outcome)) DropPeakStreamBuffer(runner, t.pair.mem_node);
      }
    }
    return std::make_shared<PeakRecord>(*this, t, std::move(result));
  }

  // Never run by the daemon (above): no series, no figures.
  Labels ConfigInfo(const ProbeRecord&) const override { return {}; }
  std::vector<FamilySpec> Families() const override { return {}; }
  void AppendFigures(const std::vector<TimedRecord>&, const FigureContext&, FigureSink&) const override {}

  // MLC's matrix: a row per CPU node (all its CPUs), a column per memory
  // node, one matrix per op.
  std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const override {
    std::vector<ReportSection> sections;
    for (k::BandwidthOp op : kPeakOps) {
      FailureNotes notes;
      MatrixSection matrix("", "cpus \\ memory");
      std::string isa;
      for (const RecordPtr& record : records) {
        const auto& r = ResultOf<k::BandwidthResult>(*record);
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
    const auto& r = ResultOf<k::BandwidthResult>(record);
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

  void RegisterFlags(FlagRegistry& flags, ProbeSettings& settings) const override {
    flags.AddSetting(name(), kPeakBurst, settings.Of<PeakBandwidthSettings>().spec.burst_bytes);
  }
  // The bandwidth kind's --threads (as given: its absence means every CPU
  // here), --bursts, --isa and --bandwidth-buffer (the least buffer).
  void AfterFlags(ProbeSettings& settings) const override {
    const BandwidthSettings& bandwidth = settings.Of<BandwidthSettings>();
    PeakBandwidthSettings& peak = settings.Of<PeakBandwidthSettings>();
    peak.threads = bandwidth.threads_flag;
    peak.spec.bursts = bandwidth.spec.bursts;
    peak.spec.isa = bandwidth.spec.isa;
    peak.buffer_bytes = bandwidth.buffer_bytes;
  }
};

}  // namespace

const ProbeKind& PeakBandwidthProbe() {
  static const PeakBandwidthKind kind;
  return kind;
}

}  // namespace numaprobe::daemon
