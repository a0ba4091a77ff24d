// SPDX-License-Identifier: Apache-2.0
#include "daemon/output/table_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "daemon/output/hmat_report.h"
#include "daemon/output/interleave_weights.h"
#include "daemon/probing/probe_table.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {

namespace k = kernels;

namespace {

// A matrix of strings with row and column headers, printed right-aligned.
class Matrix {
 public:
  void Set(const std::string& row, int col, std::string cell) {
    if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(row);
    cols_.insert(col);
    cells_[{row, col}] = std::move(cell);
  }
  std::string Render(const std::string& corner) const {
    std::size_t head = corner.size();
    for (const auto& r : rows_) head = std::max(head, r.size());
    std::size_t width = 8;
    for (const auto& [key, cell] : cells_) width = std::max(width, cell.size() + 2);
    std::string out = fmt::format("{:<{}}", corner, head);
    for (int c : cols_) out += fmt::format("{:>{}}", fmt::format("node {}", c), width);
    out += '\n';
    for (const auto& r : rows_) {
      out += fmt::format("{:<{}}", r, head);
      for (int c : cols_) {
        auto it = cells_.find({r, c});
        out += fmt::format("{:>{}}", it == cells_.end() ? "-" : it->second, width);
      }
      out += '\n';
    }
    return out;
  }
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> rows_;
  std::set<int> cols_;
  std::map<std::pair<std::string, int>, std::string> cells_;
};

// A kind's section as aligned text: row labels left, cells right-aligned,
// failures explained below.
std::string RenderSection(const ReportSection& section) {
  std::size_t head = section.corner.size();
  for (const auto& r : section.row_labels) head = std::max(head, r.size());
  std::size_t width = 8;
  for (const auto& c : section.columns) width = std::max(width, c.size() + 2);
  for (const auto& row : section.cells) {
    for (const auto& cell : row) width = std::max(width, cell.size() + 2);
  }
  std::string out = section.title + '\n' + fmt::format("{:<{}}", section.corner, head);
  for (const auto& c : section.columns) out += fmt::format("{:>{}}", c, width);
  out += '\n';
  for (std::size_t row = 0; row < section.row_labels.size(); ++row) {
    out += fmt::format("{:<{}}", section.row_labels[row], head);
    for (const auto& cell : section.cells[row]) out += fmt::format("{:>{}}", cell, width);
    out += '\n';
  }
  for (const auto& note : section.notes) out += "  " + note + '\n';
  return out + '\n';
}

}  // namespace

std::string FormatTopology(const k::Topology& topology, const Plan& plan) {
  std::string out = fmt::format("CPU model: {}\n\nNUMA nodes\n", topology.cpu_model);
  out += fmt::format("{:>6} {:>12} {:>10}  {}\n", "node", "memory MiB", "subtype", "cpus");
  for (const auto& n : topology.nodes()) {
    out += fmt::format("{:>6} {:>12} {:>10}  {}\n", n.id, n.memory_bytes >> 20, n.subtype.empty() ? "-" : n.subtype,
                       n.cpus.empty() ? "(none: memory only)" : k::FormatCpuList(n.cpus));
  }
  out += "\nLast-level caches\n";
  for (const auto& l : topology.llcs()) {
    out += fmt::format("  llc {:>3}: {:>6} KiB  cpus {}\n", l.index, l.bytes >> 10, k::FormatCpuList(l.cpus));
  }
  if (topology.has_distances()) {
    Matrix d;
    for (const auto& from : topology.nodes()) {
      for (const auto& to : topology.nodes()) {
        d.Set(fmt::format("node {}", from.id), to.id, std::to_string(topology.Distance(from.id, to.id)));
      }
    }
    out += "\nFirmware distances (SLIT)\n" + d.Render("from \\ to");
  }
  if (!topology.disallowed_cpus().empty()) {
    out += fmt::format("\nCPUs not allowed (affinity, cpuset or offline): {}\n",
                       k::FormatCpuList(topology.disallowed_cpus()));
  }
  if (!topology.disallowed_nodes().empty()) {
    out += fmt::format("Nodes not allowed (cpuset.mems): {}\n", k::FormatCpuList(topology.disallowed_nodes()));
  }
  out += "\nProbe plan\n  memory pairs (cpu -> node):";
  for (const auto& p : plan.memory_pairs) out += fmt::format(" {}->{}", p.cpu, p.mem_node);
  out += '\n';
  for (const ProbeKind* kind : ProbeTable()) {
    const std::string planned = kind->command_line().PlannedToText(plan.TargetsOf(kind->name()));
    if (!planned.empty()) out += "  " + planned + '\n';
  }
  for (const auto& n : plan.notes) out += "  note: " + n + '\n';
  return out;
}

std::string FormatReport(const ProbeReport& report) {
  std::string out;
  for (const ProbeKind* kind : ProbeTable()) {
    for (const ReportSection& section : kind->Sections(report.Of(*kind))) out += RenderSection(section);
  }
  for (const ReportSection& section : HmatSections(report.host.hmat, report.records)) out += RenderSection(section);
  const InterleaveHost interleave{report.memory_nodes, report.cpu_nodes, report.distances, report.host.hmat,
                                  report.host.weighted_interleave};
  for (const ReportSection& section : InterleaveSections(report.records, interleave)) out += RenderSection(section);
  return out;
}

}  // namespace numaprobe::daemon
