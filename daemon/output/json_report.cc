// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/json_report.h"

#include "daemon/common/version.h"
#include "daemon/output/hmat_report.h"
#include "daemon/output/interleave_weights.h"
#include "daemon/probing/probe_table.h"
#include "kernels/page_sizes.h"

namespace numaprobe::daemon {

using nlohmann::json;
namespace k = kernels;

namespace {

json PlanToJson(const Plan& plan) {
  json pairs = json::array();
  for (const auto& p : plan.memory_pairs) {
    pairs.push_back({{"cpu", p.cpu}, {"cpu_node", p.cpu_node}, {"mem_node", p.mem_node}});
  }
  json j = {{"memory_pairs", pairs}, {"notes", plan.notes}};
  // The targets the kinds planned themselves, under keys of their choosing.
  for (const ProbeKind* kind : ProbeTable()) j.update(kind->command_line().PlannedToJson(plan.TargetsOf(kind->name())));
  return j;
}

// The host's page sizes (kernels/page_sizes.h), which the buffers' page_size
// fields are chosen from; the reason instead when they could not be read.
json PageSizesToJson(const k::Expected<k::PageSizes>& sizes) {
  if (!sizes.ok()) return {{"error", sizes.failure().reason}};
  json hugetlb = json::array();
  for (const k::HugetlbSize& h : sizes->hugetlb) {
    hugetlb.push_back({{"bytes", h.bytes}, {"reserved_pages", h.reserved_pages}});
  }
  return {{"base_bytes", sizes->base},
          {"thp_bytes", sizes->thp == 0 ? json(nullptr) : json(sizes->thp)},
          {"hugetlb", hugetlb}};
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
  const HostInfo& h = report.host;
  json j = {{"version", kVersion},
            {"host",
             {{"cpu_model", h.cpu_model},
              {"microcode", h.microcode},
              {"kernel", h.kernel},
              {"thp", h.thp},
              {"clocksource", h.clocksource},
              {"virtualized", h.virtualized},
              {"hypervisor", h.hypervisor},
              {"nodes_per_package", h.nodes_per_package},
              {"page_sizes", PageSizesToJson(k::HostPageSizes())}}},
            {"topology", TopologyToJson(topology, plan)},
            {"ok", report.all_ok()}};
  // One array per kind, under its name, empty if it did not run.
  for (const ProbeKind* kind : ProbeTable()) {
    json records = json::array();
    for (const RecordPtr& r : report.Of(*kind)) records.push_back(kind->ToJson(*r));
    j[std::string(kind->name())] = std::move(records);
  }
  j["hmat"] = HmatToJson(h.hmat, report.records);
  j["interleave_weights"] =
      InterleaveToJson(InterleaveWeightsOf(report.records, {report.memory_nodes, report.cpu_nodes, report.distances,
                                                            h.hmat, h.weighted_interleave}));
  return j;
}

}  // namespace numaprobe::daemon
