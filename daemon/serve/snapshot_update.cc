#include "daemon/serve/snapshot_update.h"

#include <algorithm>
#include <set>

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

constexpr const char* kProbes[] = {"latency", "bandwidth", "c2c"};
constexpr k::Outcome kAllOutcomes[] = {
    k::Outcome::kOk,          k::Outcome::kInvalidSpec,        k::Outcome::kNotAllowed,
    k::Outcome::kAllocFailed, k::Outcome::kBindFailed,         k::Outcome::kPlacementMismatch,
    k::Outcome::kPlacementUnverified, k::Outcome::kPinFailed,  k::Outcome::kDisturbed,
    k::Outcome::kTimeout,     k::Outcome::kCancelled};
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

// Counting shared by all three probes.
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

// Applies one run of the series `same` matches: a success replaces (or
// appends) its figure; a withdrawing failure removes it; another failure
// counts against it and removes it at kFailuresWithdrawing in a row.
template <class Record, class Same>
void Apply(std::vector<Timed<Record>>& figures, const Record& record, double unix_now, Same same) {
  const k::Outcome outcome = record.result.outcome;
  auto it = std::find_if(figures.begin(), figures.end(), [&](const Timed<Record>& t) { return same(t.record); });
  if (outcome == k::Outcome::kOk) {
    if (it == figures.end()) {
      figures.push_back({record, unix_now, 0});
    } else {
      *it = {record, unix_now, 0};
    }
  } else if (it == figures.end() || outcome == k::Outcome::kCancelled) {
    return;
  } else if (WithdrawsFigure(outcome) || ++it->failed_runs >= kFailuresWithdrawing) {
    figures.erase(it);
  }
}

}  // namespace

void PlanSnapshot(Snapshot& s, const Config& config, const k::Topology& topology, const Plan& plan,
                  const HostInfo& host, const std::string& fingerprint) {
  s.host = host;
  s.fingerprint = fingerprint;
  s.per_cpu = config.targets.per_cpu;
  s.bandwidth_threads = config.bandwidth.threads;
  s.duty_cycle_budget_ratio = config.schedule.duty_cycle;
  s.distances.clear();
  auto enabled = [&](const std::string& probe) {
    return probe == "latency" ? config.latency.enabled
                              : probe == "bandwidth" ? config.bandwidth.enabled : config.core_to_core.enabled;
  };
  std::set<int> c2c_line_nodes;
  for (const auto& p : plan.c2c_pairs) c2c_line_nodes.insert(p.line_node);
  std::set<int> mem_nodes;
  for (const auto& p : plan.memory_pairs) {
    s.distances[{p.cpu_node, p.mem_node}] = topology.Distance(p.cpu_node, p.mem_node);
    mem_nodes.insert(p.mem_node);
  }
  for (const char* probe : kProbes) {
    for (k::Outcome outcome : kAllOutcomes) s.runs_total.try_emplace({probe, std::string(k::OutcomeName(outcome))}, 0);
    for (const char* reason : kDiscardReasons) s.discards_total.try_emplace({probe, reason}, 0);
    s.cpu_seconds_total.try_emplace(probe, 0.0);
  }
  for (int node : mem_nodes) {
    for (k::Outcome outcome : kPlacementOutcomes) {
      s.placement_failures_total.try_emplace({node, std::string(k::OutcomeName(outcome))}, 0);
    }
  }
  // Figures of pairs that are no longer planned (cpuset shrank, config changed) go.
  auto planned = [&](const MemoryPair& pair) {
    return std::find(plan.memory_pairs.begin(), plan.memory_pairs.end(), pair) != plan.memory_pairs.end();
  };
  std::erase_if(s.latency, [&](const auto& t) { return !config.latency.enabled || !planned(t.record.pair); });
  std::erase_if(s.bandwidth, [&](const auto& t) {
    return !config.bandwidth.enabled || !planned(t.record.pair) ||
           std::find(config.bandwidth.ops.begin(), config.bandwidth.ops.end(), t.record.result.op) ==
               config.bandwidth.ops.end();
  });
  std::erase_if(s.c2c, [&](const auto& t) {
    return !config.core_to_core.enabled ||
           std::find(plan.c2c_pairs.begin(), plan.c2c_pairs.end(), t.record.pair) == plan.c2c_pairs.end();
  });
  std::erase_if(s.probe_config, [&](const ProbeConfigInfo& info) {
    return !enabled(info.probe) || (info.probe != "c2c" && !mem_nodes.contains(std::stoi(info.labels.at("mem_node"))));
  });
  // Health series of what is no longer probed go too: a stale
  // last_success would fire NumaProbeProbeStale until the next restart.
  std::set<std::pair<int, int>> memory_nodes;  // (cpu_node, mem_node)
  for (const auto& p : plan.memory_pairs) memory_nodes.insert({p.cpu_node, p.mem_node});
  std::set<std::pair<int, int>> c2c_nodes;  // (cpu_a's node, line_node)
  for (const auto& p : plan.c2c_pairs) {
    if (const k::CpuInfo* a = topology.FindCpu(p.cpu_a)) c2c_nodes.insert({a->node, p.line_node});
  }
  std::erase_if(s.last_success, [&](const auto& entry) {
    const auto& [probe, cpu_node, mem_node] = entry.first;
    if (!enabled(probe)) return true;
    return !(probe == "c2c" ? c2c_nodes : memory_nodes).contains({cpu_node, mem_node});
  });
  std::erase_if(s.placement_failures_total, [&](const auto& entry) {
    return !mem_nodes.contains(entry.first.first) && !c2c_line_nodes.contains(entry.first.first);
  });
}

void RecordLatency(Snapshot& s, const LatencyRecord& record, double unix_now, double cost_seconds) {
  const auto& r = record.result;
  Count(s, "latency", r.outcome, r.discards, record.pair.mem_node, cost_seconds);
  const bool ok = r.outcome == k::Outcome::kOk;
  Apply(s.latency, record, unix_now, [&](const LatencyRecord& old) { return old.pair == record.pair; });
  if (!ok) return;
  s.last_success[{"latency", record.pair.cpu_node, record.pair.mem_node}] = unix_now;
  SetConfigInfo(s, "latency", record.pair.mem_node,
                {{"page_size", std::string(k::PageKindName(r.buffer.page_kind))},
                 {"buffer_bytes", std::to_string(r.buffer.bytes)},
                 {"stride", std::to_string(r.stride)},
                 {"window_bytes", std::to_string(r.window_bytes)},
                 {"loads_per_sample", std::to_string(r.loads_per_sample)},
                 {"samples", std::to_string(r.seconds_per_load.n)}});
}

void RecordBandwidth(Snapshot& s, const BandwidthRecord& record, double unix_now, double cost_seconds) {
  const auto& r = record.result;
  Count(s, "bandwidth", r.outcome, r.discards, record.pair.mem_node, cost_seconds);
  const bool ok = r.outcome == k::Outcome::kOk;
  Apply(s.bandwidth, record, unix_now,
        [&](const BandwidthRecord& old) { return old.pair == record.pair && old.result.op == r.op; });
  if (!ok) return;
  s.last_success[{"bandwidth", record.pair.cpu_node, record.pair.mem_node}] = unix_now;
  SetConfigInfo(s, "bandwidth", record.pair.mem_node,
                {{"op", std::string(k::BandwidthOpName(r.op))},
                 {"page_size", std::string(k::PageKindName(r.buffer.page_kind))},
                 {"buffer_bytes", std::to_string(r.buffer.bytes)},
                 {"burst_bytes", std::to_string(r.bytes_per_burst)},
                 {"bursts", std::to_string(r.bytes_per_second.n)},
                 {"isa", std::string(k::IsaName(r.isa))},
                 {"threads", std::to_string(r.cpus.size())}});
}

void RecordC2c(Snapshot& s, const C2cRecord& record, int cpu_a_node, double unix_now, double cost_seconds) {
  const auto& r = record.result;
  Count(s, "c2c", r.outcome, r.discards, record.pair.line_node, cost_seconds);
  const bool ok = r.outcome == k::Outcome::kOk;
  Apply(s.c2c, record, unix_now, [&](const C2cRecord& old) { return old.pair == record.pair; });
  if (!ok) return;
  s.last_success[{"c2c", cpu_a_node, record.pair.line_node}] = unix_now;
  SetConfigInfo(s, "c2c", record.pair.line_node,
                {{"page_size", std::string(k::PageKindName(r.line.page_kind))},
                 {"buffer_bytes", std::to_string(r.line.bytes)},
                 {"round_trips", std::to_string(r.round_trips)},
                 {"samples", std::to_string(r.one_way_seconds.n)}});
}

}  // namespace numaprobe::daemon
