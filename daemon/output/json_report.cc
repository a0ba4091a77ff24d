#include "daemon/output/json_report.h"

#include "daemon/common/version.h"

namespace numaprobe::daemon {

using nlohmann::json;
namespace k = kernels;

namespace {

json BufferToJson(const k::BufferInfo& b) {
  const auto& p = b.placement;
  return {{"node", b.node},
          {"bytes", b.bytes},
          // No page size for a buffer that was never allocated.
          {"page_size", b.bytes == 0 ? json(nullptr) : json(k::PageKindName(b.page_kind))},
          {"huge_fraction", b.huge_fraction},
          {"placement",
           {{"verified", p.verified()},
            {"expected_node", p.expected_node},
            {"pages_checked", p.pages_checked},
            {"pages_misplaced", p.pages_misplaced},
            {"pages_unknown", p.pages_unknown},
            {"observed_node", p.observed_node},
            {"method", p.method}}}};
}

json DiscardsToJson(const k::Discards& d) {
  return {{"context_switch", d.context_switch}, {"migration", d.migration}, {"timeout", d.timeout}};
}

// Figures only for a successful probe: a failed one must not look like a number.
json Figure(bool ok, double value) { return ok ? json(value) : json(nullptr); }

json StatsFields(bool ok, const k::SampleStats& s, const std::string& unit) {
  return {{"median_" + unit, Figure(ok, s.median)},
          {"min_" + unit, Figure(ok, s.min)},
          {"max_" + unit, Figure(ok, s.max)},
          {"mad_" + unit, Figure(ok, s.mad)},
          {"samples", s.n}};
}

json LatencyToJson(const LatencyRecord& r) {
  const bool ok = r.result.outcome == k::Outcome::kOk;
  json j = {{"cpu", r.pair.cpu},
            {"cpu_node", r.pair.cpu_node},
            {"mem_node", r.pair.mem_node},
            {"outcome", k::OutcomeName(r.result.outcome)},
            {"reason", r.result.reason},
            {"loads_per_sample", r.result.loads_per_sample},
            {"stride_bytes", r.result.stride},
            {"window_bytes", r.result.window_bytes},
            {"buffer", BufferToJson(r.result.buffer)},
            {"discards", DiscardsToJson(r.result.discards)},
            {"cpu_seconds", r.result.cpu_seconds}};
  j.update(StatsFields(ok, r.result.seconds_per_load, "seconds"));
  return j;
}

json BandwidthToJson(const BandwidthRecord& r) {
  const bool ok = r.result.outcome == k::Outcome::kOk;
  json j = {{"cpu", r.pair.cpu},
            {"cpus", r.result.cpus},
            {"threads", r.result.cpus.size()},
            {"cpu_node", r.pair.cpu_node},
            {"mem_node", r.pair.mem_node},
            {"op", k::BandwidthOpName(r.result.op)},
            {"isa", k::IsaName(r.result.isa)},
            {"outcome", k::OutcomeName(r.result.outcome)},
            {"reason", r.result.reason},
            {"bytes_per_burst", r.result.bytes_per_burst},
            {"bytes_total", r.result.bytes_total},
            {"buffer", BufferToJson(r.result.buffer)},
            {"discards", DiscardsToJson(r.result.discards)},
            {"cpu_seconds", r.result.cpu_seconds}};
  j.update(StatsFields(ok, r.result.bytes_per_second, "bytes_per_second"));
  j["bursts"] = j["samples"];
  return j;
}

json C2cToJson(const C2cRecord& r) {
  const bool ok = r.result.outcome == k::Outcome::kOk;
  json j = {{"cpu_a", r.pair.cpu_a},
            {"cpu_b", r.pair.cpu_b},
            {"line_node", r.pair.line_node},
            {"relation", k::CpuRelationName(r.pair.relation)},
            {"outcome", k::OutcomeName(r.result.outcome)},
            {"reason", r.result.reason},
            {"round_trips", r.result.round_trips},
            {"line", BufferToJson(r.result.line)},
            {"discards", DiscardsToJson(r.result.discards)},
            {"cpu_seconds", r.result.cpu_seconds}};
  j.update(StatsFields(ok, r.result.one_way_seconds, "seconds"));
  return j;
}

json PlanToJson(const Plan& plan) {
  json pairs = json::array();
  for (const auto& p : plan.memory_pairs) {
    pairs.push_back({{"cpu", p.cpu}, {"cpu_node", p.cpu_node}, {"mem_node", p.mem_node}});
  }
  json c2c = json::array();
  for (const auto& p : plan.c2c_pairs) {
    c2c.push_back({{"cpu_a", p.cpu_a},
                   {"cpu_b", p.cpu_b},
                   {"line_node", p.line_node},
                   {"relation", k::CpuRelationName(p.relation)}});
  }
  return {{"memory_pairs", pairs}, {"c2c_pairs", c2c}, {"notes", plan.notes}};
}

}  // namespace

json TopologyToJson(const k::Topology& topology, const Plan& plan) {
  json cpus = json::array();
  for (const auto& c : topology.cpus()) {
    cpus.push_back({{"id", c.id}, {"core", c.core}, {"package", c.package}, {"node", c.node}, {"llc", c.llc}});
  }
  json nodes = json::array();
  std::vector<int> node_ids;
  for (const auto& n : topology.nodes()) {
    nodes.push_back({{"id", n.id}, {"memory_bytes", n.memory_bytes}, {"cpus", n.cpus}, {"subtype", n.subtype}});
    node_ids.push_back(n.id);
  }
  json llcs = json::array();
  for (const auto& l : topology.llcs()) {
    llcs.push_back({{"index", l.index}, {"bytes", l.bytes}, {"cpus", l.cpus}});
  }
  json matrix = json::array();
  for (int from : node_ids) {
    json row = json::array();
    for (int to : node_ids) row.push_back(topology.Distance(from, to));
    matrix.push_back(row);
  }
  return {{"cpu_model", topology.cpu_model},
          {"cpus", cpus},
          {"nodes", nodes},
          {"llcs", llcs},
          {"distances", {{"nodes", node_ids}, {"matrix", matrix}}},
          {"disallowed_cpus", topology.disallowed_cpus()},
          {"disallowed_nodes", topology.disallowed_nodes()},
          {"plan", PlanToJson(plan)}};
}

json ReportToJson(const ProbeReport& report, const k::Topology& topology, const Plan& plan) {
  json latency = json::array();
  for (const auto& r : report.latency) latency.push_back(LatencyToJson(r));
  json bandwidth = json::array();
  for (const auto& r : report.bandwidth) bandwidth.push_back(BandwidthToJson(r));
  json c2c = json::array();
  for (const auto& r : report.c2c) c2c.push_back(C2cToJson(r));
  const HostInfo& h = report.host;
  return {{"version", kVersion},
          {"host",
           {{"cpu_model", h.cpu_model},
            {"microcode", h.microcode},
            {"kernel", h.kernel},
            {"thp", h.thp},
            {"clocksource", h.clocksource},
            {"virtualized", h.virtualized}}},
          {"topology", TopologyToJson(topology, plan)},
          {"latency", latency},
          {"bandwidth", bandwidth},
          {"c2c", c2c},
          {"ok", report.all_ok()}};
}

}  // namespace numaprobe::daemon
