// SPDX-License-Identifier: Apache-2.0
// ProbeKind: everything numaprobe knows about one kind of probe, in one place.
// The scheduler, `numaprobe probe`, the snapshot, /metrics, the landing page,
// the terminal table and the JSON output never switch on a kind: they iterate
// the probe table (probe_table.h), read its constants (traits(),
// kind_traits.h) and call these methods. A kind's module
// (probing/kinds/<kind>.cc) gives its traits to the constructor and
// implements the methods over its kernel's spec and result.
//
// The views get kind-neutral values (figures by family name, table sections,
// JSON), so a kind's module depends on nothing above probing/.
//
// Thread safety: kinds are immutable singletons; every method is const and
// reentrant.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/hmat.h"
#include "daemon/config/config.h"
#include "daemon/config/kind_section.h"
#include "daemon/config/kind_setting.h"
#include "daemon/config/plan_options.h"
#include "daemon/probing/kind_command_line.h"
#include "daemon/probing/kind_traits.h"
#include "daemon/probing/probe_target.h"
#include "daemon/probing/series_key.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

class ProbeKind;
class ProbeRunner;
struct Plan;  // plan.h, which includes this header's probe_target.h
struct ProbeSettings;

using Labels = std::map<std::string, std::string>;

// One value of one series: a figure, a baseline, a median (SeriesKey says
// which series).
struct BaselineValue : SeriesKey {
  double value = 0;  // in the kind's base unit (seconds, bytes per second)
};

// One run's outcome and figures. Every kernel result has the common fields
// (outcome, reason, discards, clock, cpu_seconds); ProbeRecordOf<Result> exposes them.
class ProbeRecord {
 public:
  ProbeRecord(const ProbeKind& kind, ProbeTarget target) : kind_(&kind), target_(std::move(target)) {}
  virtual ~ProbeRecord() = default;

  const ProbeKind& kind() const { return *kind_; }
  const ProbeTarget& target() const { return target_; }
  bool ok() const { return outcome() == kernels::Outcome::kOk; }

  virtual kernels::Outcome outcome() const = 0;
  virtual const std::string& reason() const = 0;
  virtual const kernels::Discards& discards() const = 0;
  virtual const kernels::ClockReport& clock() const = 0;
  virtual double cpu_seconds() const = 0;  // on the kernel's measuring threads

 private:
  const ProbeKind* kind_;
  ProbeTarget target_;
};

template <class Result>
class ProbeRecordOf final : public ProbeRecord {
 public:
  ProbeRecordOf(const ProbeKind& kind, ProbeTarget target, Result result)
      : ProbeRecord(kind, std::move(target)), result_(std::move(result)) {}
  const Result& result() const { return result_; }
  kernels::Outcome outcome() const override { return result_.outcome; }
  const std::string& reason() const override { return result_.reason; }
  const kernels::Discards& discards() const override { return result_.discards; }
  const kernels::ClockReport& clock() const override { return result_.clock; }
  double cpu_seconds() const override { return result_.cpu_seconds; }

 private:
  Result result_;
};

using RecordPtr = std::shared_ptr<const ProbeRecord>;

// ProbeKind::NotRun for a kind whose records hold a `Result`.
template <class Result>
RecordPtr NotRunRecord(const ProbeKind& kind, const ProbeTarget& target, kernels::Outcome outcome, std::string reason) {
  Result result;
  result.outcome = outcome;
  result.reason = std::move(reason);
  return std::make_shared<ProbeRecordOf<Result>>(kind, target, std::move(result));
}

// The result type of a record of a kind that knows it made it.
template <class Result>
const Result& ResultOf(const ProbeRecord& record) {
  return static_cast<const ProbeRecordOf<Result>&>(record).result();
}

// A published record and when it completed (Unix seconds).
struct TimedRecord {
  RecordPtr record;
  double unix_seconds = 0;
};

// Where a kind's figures go; the web layer turns them into exposition.
class FigureSink {
 public:
  virtual ~FigureSink() = default;
  // A label set added twice keeps the value with the larger `freshness`.
  virtual void Add(std::string_view family, const Labels& labels, double value, double freshness = 0) = 0;
};

// What every kind's figures are labelled with besides their own labels.
struct FigureContext {
  bool per_cpu = false;  // figures carry a cpu label
  int threads = 1;       // configured measuring threads per pair (a threads label when > 1)
};

// A figure of a record that the firmware also advertises (ACPI HMAT), for the
// measured / advertised comparison (output/hmat_report.h).
struct AdvertisedFigure {
  HmatAttribute attribute;
  double value = 0;  // in the attribute's unit: seconds, bytes per second
  // Every CPU of the CPU node at once (the node's peak): what the firmware's
  // bandwidth and the kernel's interleave weights describe
  // (output/interleave_weights.h). The measured / advertised comparison keeps
  // to one-thread figures.
  bool whole_node = false;
};

// One titled table of strings: the terminal table and the landing page print
// the same sections. `notes` explain failures ("!1 ...").
struct ReportSection {
  std::string title;
  std::string corner;                // the top-left header cell
  std::vector<std::string> columns;  // column headers
  std::vector<std::string> row_labels;
  std::vector<std::vector<std::string>> cells;  // [row][column]; "-" where nothing was measured
  std::vector<std::string> notes;
};

// A curve a kind draws from its records (loaded latency: latency against load
// bandwidth); `numaprobe probe --plot FILE` renders them (output/svg_plot.h).
struct PlotPoint {
  double x = 0;
  double y = 0;
};
// One polyline with a marker per point, drawn in the order given (a sweep's
// order, not sorted by x). Points with a non-finite coordinate are skipped.
struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;
};

// A kind the daemon runs apart from its rounds (ProbeKind::OwnScheduleOf):
// each of its targets once per `interval`, its CPU paced by a budget of its
// own (serve/own_schedule.h).
struct OwnSchedule {
  std::chrono::milliseconds interval{0};
  double duty_cycle = 0;  // a share of one CPU
};

// A kind is also its config section (config/kind_section.h: name(), its keys,
// Enabled(config)); `numaprobe probe` runs what --tests names.
class ProbeKind : public KindSection {
 public:
  explicit ProbeKind(KindTraits traits) : traits_(std::move(traits)) {}

  // What the kind is, as constants: its title, whether it keeps a baseline,
  // its confirmation band, its families, ... (kind_traits.h).
  const KindTraits& traits() const { return traits_; }

  // Targets of a kind that does not measure the plan's memory pairs (runs
  // between CPUs), planned at plan time from the topology and the kind's own
  // target options (PlanOptions::kind_cpus), so a bad option fails
  // check-config, start and reload naming the offending CPU. BuildPlan keeps
  // them in Plan::kind_targets; `notes` says what was left out. None for the
  // memory kinds.
  virtual kernels::Expected<std::vector<ProbeTarget>> PlanTargets(const PlanOptions& /*options*/,
                                                                  const kernels::Topology& /*topology*/,
                                                                  std::vector<std::string>& /*notes*/) const {
    return std::vector<ProbeTarget>{};
  }
  // None for a kind the daemon runs in its rounds; else the schedule of its
  // own under `config` (a kind that loads whole nodes runs every few hours).
  virtual std::optional<OwnSchedule> OwnScheduleOf(const Config& /*config*/) const { return std::nullopt; }
  // The runs of one round over `plan`, in order.
  virtual std::vector<ProbeTarget> Targets(const Plan& plan, const ProbeSettings& settings,
                                           const kernels::Topology& topology) const = 0;
  // How logs name a run: "latency cpu 3 -> node 1".
  virtual std::string Describe(const ProbeTarget& target) const = 0;
  // Runs one target; returns kCancelled if `stop` is raised.
  virtual RecordPtr Run(ProbeRunner& runner, const ProbeTarget& target, const std::atomic<bool>* stop) const = 0;
  // The record of a run that could not even start (`outcome`: the thread to
  // run it on could not be created), counted like any failed run.
  virtual RecordPtr NotRun(const ProbeTarget& target, kernels::Outcome outcome, std::string reason) const = 0;
  // A record of `outcome` whose main figure is `figure` and nothing else is
  // measured: what a simulated run produces (serve/simulation.h: the sizing
  // preview and the schedule's tests run the real loop on a simulated clock).
  // Kinds without a single main figure give their NotRun record.
  virtual RecordPtr Simulated(const ProbeTarget& target, kernels::Outcome outcome, double /*figure*/) const {
    return NotRun(target, outcome, "");
  }

  // For a kind with a baseline (traits().has_baseline): `SeriesOf` names the
  // series a target's runs feed (per-CPU mode: one per CPU, else one per pair
  // and variant) and `FigureOf` the one figure of a successful record that is
  // kept.
  virtual SeriesKey SeriesOf(const ProbeTarget& target, bool per_cpu) const {
    return SeriesKey{std::string(name()), per_cpu ? target.pair.cpu : -1, target.pair.cpu_node, target.pair.mem_node,
                     target.variant};
  }
  virtual double FigureOf(const ProbeRecord& /*record*/) const { return 0; }
  // Both at once, for a successful record of a kind with a baseline; none otherwise.
  std::optional<BaselineValue> BaselineOf(const ProbeRecord& record, bool per_cpu) const {
    if (!traits_.has_baseline || !record.ok()) return std::nullopt;
    return BaselineValue{SeriesOf(record.target(), per_cpu), FigureOf(record)};
  }
  // The thread count this run's search found for its series, if it searched
  // (kinds/peak_thread_search.h): the results model keeps it with the series'
  // baseline and hands it to later runs (ProbeRunner::found_threads).
  virtual std::optional<int> FoundThreadsOf(const ProbeRecord& /*record*/) const { return std::nullopt; }
  // Labels of a baseline value beyond its pair and op: `latest` are the
  // kind's published figures; `as_figure` labels it exactly as the figure of
  // the same series (the recent median), else from the configuration alone.
  virtual void AddBaselineLabels(const BaselineValue& /*value*/, const std::vector<TimedRecord>& /*latest*/,
                                 const FigureContext& /*context*/, bool /*as_figure*/, Labels& /*labels*/) const {}
  // This kind's part of the baseline's settings fingerprint: the settings its
  // baseline figures depend on, "key=value;..." ("" if none), joined in
  // probe-table order for the state file. Changing it re-records the kind's
  // saved baseline, so its text is frozen.
  virtual std::string SettingsFingerprint(const Config& /*config*/) const { return ""; }
  // The figure of a successful record that the firmware's HMAT also
  // advertises for its pair; none for kinds (or variants) it has no figure of.
  virtual std::optional<AdvertisedFigure> AdvertisedOf(const ProbeRecord& /*record*/) const { return std::nullopt; }
  // numaprobe_probe_config_info labels of a successful record (page size,
  // buffer bytes, ...). One series per kind, mem_node and variant.
  virtual Labels ConfigInfo(const ProbeRecord& record) const = 0;

  // Prometheus: the figures of its latest successful records (one per
  // series), in the families of traits().families.
  virtual void AppendFigures(const std::vector<TimedRecord>& latest, const FigureContext& context,
                             FigureSink& sink) const = 0;

  // Terminal and landing page: the sections of a set of records (empty
  // records: no section).
  virtual std::vector<ReportSection> Sections(const std::vector<RecordPtr>& records) const = 0;
  // Curves of a set of records, for a plot; none for most kinds.
  virtual std::vector<PlotSeries> Curves(const std::vector<RecordPtr>& /*records*/) const { return {}; }
  // JSON output of one record (figures null unless ok).
  virtual nlohmann::json ToJson(const ProbeRecord& record) const = 0;

  // This kind's run settings under `config` (ProbeSettings::Of<its type>),
  // for the daemon and as `numaprobe probe`'s defaults.
  virtual void AddSettings(const Config& /*config*/, ProbeSettings& /*settings*/) const {}
  // This kind's part of how its figures are labelled under `config`.
  virtual void AddFigureContext(const Config& /*config*/, FigureContext& /*context*/) const {}

  // Its part of the command line: its flags and how `numaprobe topology`
  // shows its own targets (kind_command_line.h); by default none.
  virtual const KindCommandLine& command_line() const {
    static const KindCommandLine none;
    return none;
  }

 private:
  KindTraits traits_;
};

}  // namespace numaprobe::daemon
