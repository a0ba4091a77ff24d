// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/snapshot_update.h"

#include <algorithm>
#include <set>

#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

constexpr k::Outcome kPlacementOutcomes[] = {k::Outcome::kBindFailed, k::Outcome::kPlacementMismatch,
                                             k::Outcome::kPlacementUnverified};
constexpr const char* kDiscardReasons[] = {"context_switch", "migration", "timeout"};

bool IsPlacementFailure(k::Outcome outcome) {
  return std::find(std::begin(kPlacementOutcomes), std::end(kPlacementOutcomes), outcome) !=
         std::end(kPlacementOutcomes);
}

// Failures that say the last figure no longer describes anything: the memory
// is not where it must be, or the CPU or node left what this process may use
// (a cpuset shrank under a configured target). Other failures (disturbed,
// timeout, allocation) keep the last good figure, with its timestamp aging,
// but only until that series (the pair, and the op or c2c pair: not the
// coarser last_success key, which a sibling series keeps fresh) has failed
// kFailuresWithdrawing runs in a row; then it is withdrawn too, so a series
// that keeps failing does not publish a figure days old. A success resets
// the count; a cancelled run (stopping) does not count.
constexpr int kFailuresWithdrawing = 3;

bool WithdrawsFigure(k::Outcome outcome) {
  return IsPlacementFailure(outcome) || outcome == k::Outcome::kNotAllowed || outcome == k::Outcome::kPinFailed;
}

// Counting shared by every kind.
void Count(Snapshot& s, const std::string& probe, k::Outcome outcome, const k::Discards& discards, int mem_node,
           double cost_seconds) {
  ++s.runs_total[{probe, std::string(k::OutcomeName(outcome))}];
  s.cpu_seconds_total[probe] += cost_seconds;
  s.discards_total[{probe, "context_switch"}] += discards.context_switch;
  s.discards_total[{probe, "migration"}] += discards.migration;
  s.discards_total[{probe, "timeout"}] += discards.timeout;
  if (IsPlacementFailure(outcome)) ++s.placement_failures_total[{mem_node, std::string(k::OutcomeName(outcome))}];
}

// One entry per probe, mem_node and (bandwidth) op: ops differ in their burst
// sizes, and one entry rewritten by each op in turn would churn series.
void SetConfigInfo(Snapshot& s, const std::string& probe, int mem_node, std::map<std::string, std::string> labels) {
  labels["mem_node"] = std::to_string(mem_node);
  auto label = [](const std::map<std::string, std::string>& l, const char* name) {
    const auto it = l.find(name);
    return it == l.end() ? std::string() : it->second;
  };
  auto it = std::find_if(s.probe_config.begin(), s.probe_config.end(), [&](const ProbeConfigInfo& info) {
    return info.probe == probe && label(info.labels, "mem_node") == labels["mem_node"] &&
           label(info.labels, "op") == label(labels, "op");
  });
  if (it == s.probe_config.end()) {
    s.probe_config.push_back({probe, std::move(labels)});
  } else {
    it->labels = std::move(labels);
  }
}

// Applies one run of its series (kind and target): a success replaces (or
// appends) its figure; a withdrawing failure removes it; another failure
// counts against it and removes it at kFailuresWithdrawing in a row.
void Apply(std::vector<Timed>& figures, const RecordPtr& record, double unix_now) {
  const k::Outcome outcome = record->outcome();
  auto it = std::find_if(figures.begin(), figures.end(), [&](const Timed& t) {
    return &t.record->kind() == &record->kind() && t.record->target() == record->target();
  });
  if (outcome == k::Outcome::kOk) {
    if (it == figures.end()) {
      figures.push_back({record, unix_now, 0});
    } else {
      *it = {record, unix_now, 0};
    }
  } else if (it == figures.end() || outcome == k::Outcome::kCancelled || outcome == k::Outcome::kSkipped) {
    // Neither says anything of the series: stopping, or a gate that kept the run from starting.
    return;
  } else if (WithdrawsFigure(outcome) || ++it->failed_runs >= kFailuresWithdrawing) {
    figures.erase(it);
  }
}

// Facts that hold for the whole plan and are simply overwritten on replan.
void SetPlanFacts(Snapshot& s, const Config& config, const k::Topology& topology, const Plan& plan,
                  const HostInfo& host, const std::string& fingerprint) {
  s.host = host;
  s.fingerprint = fingerprint;
  s.figure_context = FigureContextFrom(config);
  s.distances.clear();
  for (const auto& p : plan.memory_pairs)
    s.distances[{p.cpu_node, p.mem_node}] = topology.Distance(p.cpu_node, p.mem_node);
}

// What the daemon probes now, per kind: its targets, their (cpu_node,
// mem_node) health keys and memory nodes. Computed once so that zeroing
// counters and dropping stale series agree on what "planned" means.
struct PlannedSeries {
  std::vector<std::string> names;  // enabled kinds, in probe table order
  std::map<const ProbeKind*, std::vector<ProbeTarget>> targets;
  std::map<std::string, std::set<std::pair<int, int>>> health_keys;
  std::map<std::string, std::set<int>> kind_nodes;
  std::set<int> mem_nodes;
};

PlannedSeries ListPlannedSeries(const Config& config, const k::Topology& topology, const Plan& plan) {
  const ProbeSettings settings = ProbeSettingsFrom(config);
  PlannedSeries planned;
  for (const ProbeKind* kind : ProbeTable()) {
    if (!kind->Enabled(config)) continue;
    const std::string name(kind->name());
    planned.names.push_back(name);
    planned.targets[kind] = kind->Targets(plan, settings, topology);
    for (const ProbeTarget& t : planned.targets[kind]) {
      planned.health_keys[name].insert({t.pair.cpu_node, t.pair.mem_node});
      planned.kind_nodes[name].insert(t.pair.mem_node);
      planned.mem_nodes.insert(t.pair.mem_node);
    }
  }
  return planned;
}

// Every counter series known in advance exists from the start at 0, so that
// rate() and increase() see the first failure instead of a series appearing.
// try_emplace: counters already counting keep their value (monotonic).
void ZeroPlannedCounters(Snapshot& s, const PlannedSeries& planned) {
  s.probes.clear();
  for (const std::string& name : planned.names) {
    s.probes.insert(name);
    for (k::Outcome outcome : k::kAllOutcomes)
      s.runs_total.try_emplace({name, std::string(k::OutcomeName(outcome))}, 0);
    for (const char* reason : kDiscardReasons) s.discards_total.try_emplace({name, reason}, 0);
    s.cpu_seconds_total.try_emplace(name, 0.0);
  }
  for (int node : planned.mem_nodes) {
    for (k::Outcome outcome : kPlacementOutcomes) {
      s.placement_failures_total.try_emplace({node, std::string(k::OutcomeName(outcome))}, 0);
    }
  }
}

// Series that left the plan (cpuset shrank, config changed, kind disabled)
// must not keep publishing what they last knew.
void DropUnplannedSeries(Snapshot& s, const PlannedSeries& planned) {
  std::erase_if(s.figures, [&](const Timed& t) {
    const auto it = planned.targets.find(&t.record->kind());
    return it == planned.targets.end() ||
           std::find(it->second.begin(), it->second.end(), t.record->target()) == it->second.end();
  });
  std::erase_if(s.probe_config, [&](const ProbeConfigInfo& info) {
    const auto it = planned.kind_nodes.find(info.probe);
    return it == planned.kind_nodes.end() || !it->second.contains(std::stoi(info.labels.at("mem_node")));
  });
  // Health series of what is no longer probed go too: a stale
  // last_success would fire NumaProbeProbeStale until the next restart.
  std::erase_if(s.last_success, [&](const auto& entry) {
    const auto& [probe, cpu_node, mem_node] = entry.first;
    const auto it = planned.health_keys.find(probe);
    return it == planned.health_keys.end() || !it->second.contains({cpu_node, mem_node});
  });
  std::erase_if(s.placement_failures_total,
                [&](const auto& entry) { return !planned.mem_nodes.contains(entry.first.first); });
}

}  // namespace

std::vector<TimedRecord> Snapshot::FiguresOf(const ProbeKind& kind) const {
  std::vector<TimedRecord> of;
  for (const Timed& t : figures) {
    if (&t.record->kind() == &kind && t.record->ok()) of.push_back({t.record, t.unix_seconds});
  }
  return of;
}

void PlanSnapshot(Snapshot& s, const Config& config, const k::Topology& topology, const Plan& plan,
                  const HostInfo& host, const std::string& fingerprint) {
  SetPlanFacts(s, config, topology, plan, host, fingerprint);
  const PlannedSeries planned = ListPlannedSeries(config, topology, plan);
  ZeroPlannedCounters(s, planned);
  DropUnplannedSeries(s, planned);
}

void RecordRun(Snapshot& s, const RecordPtr& record, double unix_now, double cost_seconds) {
  const ProbeKind& kind = record->kind();
  const std::string probe(kind.name());
  const ProbeTarget& target = record->target();
  Count(s, probe, record->outcome(), record->discards(), target.pair.mem_node, cost_seconds);
  Apply(s.figures, record, unix_now);
  if (!record->ok()) return;
  s.last_success[{probe, target.pair.cpu_node, target.pair.mem_node}] = unix_now;
  SetConfigInfo(s, probe, target.pair.mem_node, kind.ConfigInfo(*record));
}

}  // namespace numaprobe::daemon
