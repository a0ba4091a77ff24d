// SPDX-License-Identifier: Apache-2.0
// The host facts (runtime_facts.h, HostFacts) and what the firmware
// advertises (ACPI HMAT) beside the measured figures. Bounded per host: one
// info series per fact, one gauge per node and pool, one HMAT series per
// target node, class and op, one ratio per measured pair.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "daemon/output/hmat_report.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/metrics.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// Per-node numbers are gauges of their own; a watched boot parameter that is
// not on the command line says nothing: neither is an info series.
bool InfoSeries(const std::string& field, const std::string& value) {
  if (field.rfind("node", 0) == 0 && field.find('.') != std::string::npos) return false;
  return !(field.rfind("cmdline.", 0) == 0 && value == "unset");
}

void AppendFacts(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder info("numaprobe_host_fact_info",
                     "A host setting that moves NUMA latency or bandwidth and its value (field: thp_enabled, "
                     "thp_defrag, "
                     "numa_balancing, cpufreq_governor.nodeN, cpufreq_epp.nodeN, cmdline.NAME of a watched boot "
                     "parameter that is set, cmdline.other_hash, demotion_enabled, memory_tiers, edac_memory, "
                     "hardware_corrupted_bytes, weighted_interleave, weighted_interleave_auto), read every round and "
                     "on SIGHUP; the value is unknown where the host does not expose it. Changes are "
                     "numaprobe_host_change_timestamp_seconds; always 1.",
                     MetricType::Gauge);
  for (const auto& [field, value] : s.runtime_facts.fields) {
    if (InfoSeries(field, value)) info.Add({{"field", field}, {"value", value}}, 1);
  }
  out.push_back(info.Build());

  FamilyBuilder total("numaprobe_node_memory_total_bytes",
                      "MemTotal of the NUMA node (node/nodeN/meminfo), read every round: it shrinks when memory "
                      "is offlined or a DIMM fails.",
                      MetricType::Gauge);
  FamilyBuilder pools("numaprobe_node_hugepages",
                      "Pages in the node's persistent hugepage pool of page_size (nr_hugepages), read every round.",
                      MetricType::Gauge);
  for (const NodeMemory& n : s.runtime_facts.nodes) {
    if (n.mem_total_bytes) total.Add({{"node", Id(n.node)}}, static_cast<double>(*n.mem_total_bytes));
    for (const auto& [bytes, pages] : n.hugepages) {
      pools.Add({{"node", Id(n.node)}, {"page_size", fmt::format("{}kB", bytes / 1024)}}, static_cast<double>(pages));
    }
  }
  out.push_back(total.Build());
  out.push_back(pools.Build());

  FamilyBuilder errors("numaprobe_host_memory_errors_since_baseline",
                       "Memory errors EDAC counted (type: corrected, uncorrected) since the baseline was recorded, "
                       "summed over the memory controllers; absent without an EDAC driver.",
                       MetricType::Gauge);
  if (const auto& e = s.memory_errors_since_baseline) {
    errors.Add({{"type", "corrected"}}, static_cast<double>(e->corrected));
    errors.Add({{"type", "uncorrected"}}, static_cast<double>(e->uncorrected));
  }
  out.push_back(errors.Build());
  FamilyBuilder corrupted("numaprobe_host_hardware_corrupted_bytes",
                          "Memory the kernel poisoned after hardware errors (/proc/meminfo HardwareCorrupted).",
                          MetricType::Gauge);
  if (const auto& bytes = s.runtime_facts.hardware_corrupted_bytes) corrupted.Add({}, static_cast<double>(*bytes));
  out.push_back(corrupted.Build());
}

void AppendHmat(const Snapshot& s, std::vector<MetricFamily>& out) {
  const std::string where =
      " advertised by the firmware (ACPI HMAT) from the best initiators of initiator_class (any, cpu) to mem_node "
      "(op: read, write); absent without an HMAT.";
  FamilyBuilder advertised_latency("numaprobe_hmat_latency_seconds", "Access latency" + where, MetricType::Gauge);
  FamilyBuilder advertised_bandwidth("numaprobe_hmat_bandwidth_bytes_per_second", "Access bandwidth" + where,
                                     MetricType::Gauge);
  FamilyBuilder initiators("numaprobe_hmat_initiators_info",
                           "The initiator nodes the HMAT figures of mem_node and initiator_class apply to; always 1.",
                           MetricType::Gauge);
  for (const HmatTarget& t : s.host.hmat) {
    const auto labels = [&](const char* op) {
      return Labels{{"mem_node", Id(t.mem_node)}, {"initiator_class", t.class_name()}, {"op", op}};
    };
    if (t.read_latency_seconds) advertised_latency.Add(labels("read"), *t.read_latency_seconds);
    if (t.write_latency_seconds) advertised_latency.Add(labels("write"), *t.write_latency_seconds);
    if (t.read_bandwidth_bytes_per_second) advertised_bandwidth.Add(labels("read"), *t.read_bandwidth_bytes_per_second);
    if (t.write_bandwidth_bytes_per_second)
      advertised_bandwidth.Add(labels("write"), *t.write_bandwidth_bytes_per_second);
    initiators.Add({{"mem_node", Id(t.mem_node)},
                    {"initiator_class", t.class_name()},
                    {"initiator_nodes", kernels::FormatCpuList(t.initiators)}},
                   1);
  }
  out.push_back(advertised_latency.Build());
  out.push_back(advertised_bandwidth.Build());
  out.push_back(initiators.Build());

  // One family per ratio family of the compared attributes, each present
  // even without series.
  std::vector<std::pair<const HmatRatioFamily*, FamilyBuilder>> ratios;
  const auto builder_of = [&](const HmatRatioFamily* family) -> FamilyBuilder& {
    for (auto& [f, builder] : ratios) {
      if (f == family) return builder;
    }
    return ratios.emplace_back(family, FamilyBuilder(family->name, family->help, MetricType::Gauge)).second;
  };
  for (const ComparedAttribute& a : ComparedAttributes()) builder_of(a.family);
  std::vector<RecordPtr> records;
  for (const Timed& t : s.figures) records.push_back(t.record);
  for (const HmatComparison& c : CompareWithHmat(s.host.hmat, records)) {
    for (const ComparedAttribute& a : ComparedAttributes()) {
      const auto ratio = c.RatioOf(a.attribute);
      if (!ratio) continue;
      Labels labels{{"cpu_node", Id(c.cpu_node)}, {"mem_node", Id(c.mem_node)}};
      if (*a.op != '\0') labels["op"] = a.op;
      builder_of(a.family).Add(labels, *ratio);
    }
  }
  for (auto& [family, builder] : ratios) out.push_back(builder.Build());
}

}  // namespace

void AppendHostFamilies(const Snapshot& snapshot, std::vector<MetricFamily>& out) {
  AppendFacts(snapshot, out);
  AppendHmat(snapshot, out);
}

}  // namespace numaprobe::daemon
