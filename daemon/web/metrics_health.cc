// SPDX-License-Identifier: Apache-2.0
// Self-description and health: what ran, what it cost, what was measured and
// on which host and build. The scheduler keeps these in the Snapshot, so they
// too are as of the last scheduled probe, never computed by the scrape.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <prometheus/check_names.h>

#include "daemon/common/version.h"
#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "kernels/result.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr const char* kAsOf = ". As of the last scheduled probe, not the scrape.";

std::string Help(const std::string& what) { return what + kAsOf; }

// numaprobe_probe_runs_total's HELP, its label values read from the code:
// the probe kinds (ProbeTable) and the outcomes (kernels/result.h), so that a
// new kind or outcome is named without editing a text.
std::string RunsHelp() {
  std::vector<std::string_view> kinds;
  for (const ProbeKind* kind : ProbeTable()) kinds.push_back(kind->name());
  std::vector<std::string_view> failures;
  for (const k::Outcome outcome : k::kAllOutcomes) {
    if (outcome != k::Outcome::kOk && outcome != k::Outcome::kSkipped && outcome != k::Outcome::kCancelled) {
      failures.push_back(k::OutcomeName(outcome));
    }
  }
  return Help(fmt::format(
      "Probe runs by probe (those enabled of {}) and result: ok (a figure), skipped (not measured: the idle gate "
      "probes.peak_bandwidth.max_busy found the CPUs busy), cancelled (the daemon stopped) or why it failed ({}). "
      "Every run counts, a disturbed run's retry and the confirmation runs of a figure beyond its band included; "
      "every result of a planned probe starts at 0",
      fmt::join(kinds, ", "), fmt::join(failures, ", ")));
}

// What ran and when it last worked: the first thing to read when a figure is
// missing (did the probe run at all, or did it fail, and since when?).
void AppendRunOutcomes(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder runs("numaprobe_probe_runs_total", RunsHelp(), MetricType::Counter);
  for (const auto& [key, count] : s.runs_total) {
    runs.Add({{"probe", key.first}, {"result", key.second}}, static_cast<double>(count));
  }
  out.push_back(runs.Build());

  FamilyBuilder last(
      "numaprobe_probe_last_success_timestamp_seconds",
      Help("Unix time of the last successful probe of a pair; for core_to_core, cpu_node is the node of cpu_a "
           "and mem_node the node the line lives on"),
      MetricType::Gauge);
  for (const auto& [key, seconds] : s.last_success) {
    const auto& [probe, cpu_node, mem_node] = key;
    last.Add({{"probe", probe}, {"cpu_node", Id(cpu_node)}, {"mem_node", Id(mem_node)}}, seconds);
  }
  out.push_back(last.Build());

  // The same timestamps summed up per probe: NumaProbeProbeStale compares
  // this one series a probe with the host's refresh interval instead of
  // reading every pair's (164 a host on 8 nodes, over 1 s of rule evaluation
  // a minute at 1,000 hosts, docs/detection.md); the alert's description
  // then reads the pairs of the one host it fires for.
  std::map<std::string, double> oldest;
  for (const auto& [key, seconds] : s.last_success) {
    const std::string& probe = std::get<0>(key);
    const auto [it, inserted] = oldest.try_emplace(probe, seconds);
    if (!inserted) it->second = std::min(it->second, seconds);
  }
  FamilyBuilder oldest_family(
      "numaprobe_probe_oldest_success_timestamp_seconds",
      Help("Per probe, the oldest of its pairs' numaprobe_probe_last_success_timestamp_seconds: the last success of "
           "the pair refreshed least recently"),
      MetricType::Gauge);
  for (const auto& [probe, seconds] : oldest) oldest_family.Add({{"probe", probe}}, seconds);
  out.push_back(oldest_family.Build());
}

// What the probes cost against what they may cost: an operator sizing
// schedule.duty_cycle compares these two.
void AppendCpuCost(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder cpu("numaprobe_probe_cpu_seconds_total",
                    Help("Thread CPU time spent in probes by probe, all measuring threads and warm-up included"),
                    MetricType::Counter);
  for (const auto& [probe, seconds] : s.cpu_seconds_total) cpu.Add({{"probe", probe}}, seconds);
  out.push_back(cpu.Build());

  FamilyBuilder duty("numaprobe_duty_cycle_ratio",
                     Help("Probe CPU seconds per second over the trailing 10 minutes, as a share of one CPU"),
                     MetricType::Gauge);
  duty.Add({}, s.duty_cycle_ratio);
  out.push_back(duty.Build());
  FamilyBuilder budget("numaprobe_duty_cycle_budget_ratio",
                       "The probe CPU budget in force, as a share of one CPU: schedule.learning_duty_cycle while a "
                       "planned series records its baseline (numaprobe_baseline_series, state recording, above 0; "
                       "auto: 90% of the smaller of 1% of one CPU and 0.01% of the host's CPUs, never below "
                       "schedule.duty_cycle), else schedule.duty_cycle.",
                       MetricType::Gauge);
  budget.Add({}, s.duty_cycle_budget_ratio);
  out.push_back(budget.Build());
}

// Work thrown away before it became a figure: high counts explain gaps and
// point at a noisy or misconfigured host rather than at the memory system.
void AppendRejectedWork(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder discards("numaprobe_samples_discarded_total",
                         Help("Samples discarded and retried by probe and reason (context_switch, migration, "
                              "timeout), never part of a published figure"),
                         MetricType::Counter);
  for (const auto& [key, count] : s.discards_total) {
    discards.Add({{"probe", key.first}, {"reason", key.second}}, static_cast<double>(count));
  }
  out.push_back(discards.Build());

  FamilyBuilder placement("numaprobe_placement_failures_total",
                          Help("Probe buffers whose pages were not verified on the requested mem_node, by reason; "
                               "such runs publish no figure"),
                          MetricType::Counter);
  for (const auto& [key, count] : s.placement_failures_total) {
    placement.Add({{"mem_node", Id(key.first)}, {"reason", key.second}}, static_cast<double>(count));
  }
  out.push_back(placement.Build());
}

// How the schedule is keeping up: rounds, waits for another prober, and the
// refresh interval that staleness alerts are judged against.
void AppendScheduleProgress(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder rounds("numaprobe_rounds_completed_total",
                       Help("Complete probe rounds since start (when pairs rotate, a round measures part of the plan: "
                            "numaprobe_rotation_rounds)"),
                       MetricType::Counter);
  rounds.Add({}, static_cast<double>(s.rounds_completed));
  out.push_back(rounds.Build());

  FamilyBuilder lock_wait("numaprobe_probe_lock_wait_seconds_total",
                          Help("Wall time probes waited while another numaprobe process on the host (a second "
                               "daemon, a `numaprobe probe`) was probing"),
                          MetricType::Counter);
  lock_wait.Add({}, s.probe_lock_wait_seconds);
  out.push_back(lock_wait.Build());

  // Only while a probe waits: a stall has a process and a user to look at.
  if (s.probe_lock_holder) {
    FamilyBuilder holder("numaprobe_probe_lock_holder_info",
                         Help("The process holding the probe lock while a probe waits for it, from /proc/locks (pid 0: "
                              "in another PID namespace; uid -1: unknown); absent when no probe waits"),
                         MetricType::Gauge);
    holder.Add({{"pid", std::to_string(s.probe_lock_holder->pid)},
                {"uid", std::to_string(s.probe_lock_holder->uid)},
                {"comm", s.probe_lock_holder->comm}},
               1);
    out.push_back(holder.Build());
  }

  FamilyBuilder refresh("numaprobe_refresh_interval_seconds",
                        "Expected seconds between two figures of one series at the current schedule: the larger of "
                        "schedule.interval and the duration of the last complete round (schedule.interval until "
                        "the first round ends), times numaprobe_rotation_rounds. Staleness is judged against it.",
                        MetricType::Gauge);
  refresh.Add({}, s.refresh_interval_seconds);
  out.push_back(refresh.Build());

  FamilyBuilder rotation("numaprobe_rotation_rounds",
                         "Rounds it takes to measure every pair once. 1: every round measures every pair. More: a "
                         "full round costs more CPU than 2 x schedule.duty_cycle x schedule.interval, so one pair "
                         "per probe kind and node distance runs every round and the others in rotation.",
                         MetricType::Gauge);
  rotation.Add({}, s.rotation_rounds);
  out.push_back(rotation.Build());
}

// Kept apart so that the one gauge saying "these figures are fake" is never
// lost in an edit to the others.
void AppendFaultInjection(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder fault("numaprobe_test_fault_injection_active",
                      "1 if test-only fault injection (NUMAPROBE_TEST_SCALE_*, honoured only with "
                      "NUMAPROBE_TEST_MODE=1) scales the published figures: they are fake. 0 in production.",
                      MetricType::Gauge);
  fault.Add({}, s.test_fault_injection_active ? 1 : 0);
  out.push_back(fault.Build());
}

// Order is the exposition order (tests/fixtures/metrics.golden).
void AppendProbeCounters(const Snapshot& s, std::vector<MetricFamily>& out) {
  AppendRunOutcomes(s, out);
  AppendCpuCost(s, out);
  AppendRejectedWork(s, out);
  AppendScheduleProgress(s, out);
  AppendFaultInjection(s, out);
}

void AppendDescriptions(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder config("numaprobe_probe_config_info",
                       Help("What a probe measures with, per probe, memory node (mem_node) and op: its buffer's "
                            "page_size and buffer_bytes and its kind's settings (latency: stride, window_bytes, "
                            "loads_per_sample, samples; bandwidth: burst_bytes, bursts, isa, threads; peak_bandwidth: "
                            "burst_bytes, bursts, isa; interleave_bandwidth: those and the weights; loaded_latency: "
                            "load_buffer_bytes, load_threads, isa, points; core_to_core: round_trips, samples), "
                            "always 1"),
                       MetricType::Gauge);
  for (const ProbeConfigInfo& info : s.probe_config) {
    std::map<std::string, std::string> labels;
    for (const auto& [name, value] : info.labels) {
      // A name the text format cannot carry would break the whole scrape.
      if (name != "probe" && prometheus::CheckLabelName(name)) labels[name] = value;
    }
    labels["probe"] = info.probe;
    config.Add(labels, 1);
  }
  out.push_back(config.Build());

  FamilyBuilder reload("numaprobe_config_last_reload_successful",
                       "1 if the last configuration load or reload succeeded, 0 if it failed and the previous "
                       "configuration is still in use.",
                       MetricType::Gauge);
  reload.Add({}, s.config_reload_successful ? 1 : 0);
  out.push_back(reload.Build());
  FamilyBuilder reload_time("numaprobe_config_last_reload_success_timestamp_seconds",
                            "Unix time of the last successful configuration load or reload.", MetricType::Gauge);
  reload_time.Add({}, s.config_reload_unix_seconds);
  out.push_back(reload_time.Build());

  FamilyBuilder state_ok("numaprobe_state_last_write_successful",
                         "1 if the last write of <state_directory>/state.json succeeded (or none was needed yet), 0 if "
                         "it failed (full or read-only directory); what is learnt is then kept in memory only and the "
                         "write is retried every 5 s; also 0 while an operator's request acted on cannot be removed.",
                         MetricType::Gauge);
  state_ok.Add({}, s.state_write_successful ? 1 : 0);
  out.push_back(state_ok.Build());
  FamilyBuilder state_failures("numaprobe_state_write_failures_total",
                               "Failed writes of <state_directory>/state.json since start (each retry counts).",
                               MetricType::Counter);
  state_failures.Add({}, static_cast<double>(s.state_write_failures_total));
  out.push_back(state_failures.Build());
  FamilyBuilder features_ok("numaprobe_node_features_last_write_successful",
                            "1 if the last write of <node_feature_directory>/numaprobe (Node Feature Discovery's "
                            "feature file) succeeded, or none is configured or due yet; 0 if it failed (missing or "
                            "read-only directory, full disk): the write is retried every 30 s, and the labels NFD "
                            "publishes lapse at the file's expiry.",
                            MetricType::Gauge);
  features_ok.Add({}, s.node_features_write_successful ? 1 : 0);
  out.push_back(features_ok.Build());
  FamilyBuilder features_failures(
      "numaprobe_node_features_write_failures_total",
      "Failed writes of <node_feature_directory>/numaprobe since start (each retry counts).", MetricType::Counter);
  features_failures.Add({}, static_cast<double>(s.node_features_write_failures_total));
  out.push_back(features_failures.Build());

  const HostInfo& h = s.host;
  FamilyBuilder host(
      "numaprobe_host_info",
      "Facts that qualify every figure (CPU model, kernel, host fingerprint, microcode, firmware "
      "(BIOS version), virtualized (true or false) and the hypervisor, transparent huge pages (thp: the enabled mode), "
      "clock source (clocksource), CPU nodes per package "
      "(the SNC/NPS mode)) and the peer cohort's topology (numa_nodes, numa_distance_sum), read whenever the probes "
      "are planned: "
      "at start, on every reload and when the allowed CPUs or memory nodes change; always 1.",
      MetricType::Gauge);
  Labels host_labels = CohortLabels(s);  // cpu_model and the topology
  host_labels.insert({{"kernel", h.kernel},
                      {"fingerprint", s.fingerprint},
                      {"microcode", h.microcode},
                      {"firmware", h.firmware},
                      {"virtualized", h.virtualized ? "true" : "false"},
                      {"hypervisor", h.hypervisor},
                      {"nodes_per_package", h.nodes_per_package},
                      {"thp", h.thp},
                      {"clocksource", h.clocksource}});
  host.Add(host_labels, 1);
  out.push_back(host.Build());

  FamilyBuilder build("numaprobe_build_info",
                      "Version, git revision and branch numaprobe was built from, and the compiler; always 1.",
                      MetricType::Gauge);
  build.Add({{"version", kVersion}, {"revision", kRevision}, {"branch", kBranch}, {"compiler", kCompiler}}, 1);
  out.push_back(build.Build());
}

}  // namespace

void AppendHealthFamilies(const Snapshot& snapshot, std::vector<MetricFamily>& out) {
  AppendProbeCounters(snapshot, out);
  AppendDescriptions(snapshot, out);
}

}  // namespace numaprobe::daemon
