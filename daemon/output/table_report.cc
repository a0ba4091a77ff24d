#include "daemon/output/table_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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

// Rows are labelled by measuring CPU and its node; in the default plan there
// is one row per node, in per-CPU mode one per CPU.
std::string RowLabel(const MemoryPair& p) { return fmt::format("cpu {:>3} (node {})", p.cpu, p.cpu_node); }

// Failures are shown in the cell as "!N" and explained below the table.
class Footnotes {
 public:
  std::string Add(const std::string& what, k::Outcome outcome, const std::string& reason) {
    notes_.push_back(fmt::format("  !{} {}: {}: {}", notes_.size() + 1, what, k::OutcomeName(outcome), reason));
    return fmt::format("!{}", notes_.size());
  }
  std::string Render() const {
    std::string out;
    for (const auto& n : notes_) out += n + '\n';
    return out;
  }

 private:
  std::vector<std::string> notes_;
};

std::string LatencySection(const ProbeReport& report, Footnotes& notes) {
  Matrix m;
  std::set<std::string> pages;
  for (const auto& r : report.latency) {
    const auto& res = r.result;
    if (res.outcome == k::Outcome::kOk) {
      m.Set(RowLabel(r.pair), r.pair.mem_node, fmt::format("{:.1f}", res.seconds_per_load.median * 1e9));
      pages.insert(std::string(k::PageKindName(res.buffer.page_kind)));
    } else {
      m.Set(RowLabel(r.pair), r.pair.mem_node,
            notes.Add(fmt::format("latency cpu {} -> node {}", r.pair.cpu, r.pair.mem_node), res.outcome,
                      res.reason));
    }
  }
  if (m.empty()) return "";
  std::string page_list;
  for (const auto& p : pages) page_list += (page_list.empty() ? "" : ", ") + p;
  return fmt::format("Idle memory latency (ns, median; pages: {})\n{}\n", page_list.empty() ? "-" : page_list,
                     m.Render("cpu \\ memory"));
}

std::string BandwidthSection(const ProbeReport& report, Footnotes& notes) {
  std::string out;
  for (k::BandwidthOp op : {k::BandwidthOp::kRead, k::BandwidthOp::kWrite, k::BandwidthOp::kCopy}) {
    Matrix m;
    std::size_t threads = 0;
    std::string isa;
    for (const auto& r : report.bandwidth) {
      if (r.result.op != op) continue;
      const auto& res = r.result;
      threads = std::max(threads, res.cpus.size());
      if (res.outcome == k::Outcome::kOk) {
        m.Set(RowLabel(r.pair), r.pair.mem_node, fmt::format("{:.2f}", res.bytes_per_second.median / 1e9));
        isa = k::IsaName(res.isa);
      } else {
        m.Set(RowLabel(r.pair), r.pair.mem_node,
              notes.Add(fmt::format("{} bandwidth cpu {} -> node {}", k::BandwidthOpName(op), r.pair.cpu,
                                    r.pair.mem_node),
                        res.outcome, res.reason));
      }
    }
    if (m.empty()) continue;
    out += fmt::format("Memory bandwidth, {} (GB/s, median; {} thread{}, {})\n{}\n", k::BandwidthOpName(op), threads,
                       threads == 1 ? "" : "s", isa.empty() ? "-" : isa, m.Render("cpu \\ memory"));
  }
  return out;
}

std::string C2cSection(const ProbeReport& report, Footnotes& notes) {
  if (report.c2c.empty()) return "";
  std::string out = "Core-to-core latency (ns, one way = round trip / 2, median)\n";
  out += fmt::format("{:>6} {:>6} {:>10} {:>11} {:>10} {:>8}\n", "cpu_a", "cpu_b", "line_node", "relation",
                     "one-way", "MAD");
  for (const auto& r : report.c2c) {
    const auto& res = r.result;
    const bool ok = res.outcome == k::Outcome::kOk;
    const std::string value =
        ok ? fmt::format("{:.1f}", res.one_way_seconds.median * 1e9)
           : notes.Add(fmt::format("c2c cpu {} <-> cpu {}", r.pair.cpu_a, r.pair.cpu_b), res.outcome, res.reason);
    out += fmt::format("{:>6} {:>6} {:>10} {:>11} {:>10} {:>8}\n", r.pair.cpu_a, r.pair.cpu_b, r.pair.line_node,
                       k::CpuRelationName(r.pair.relation), value,
                       ok ? fmt::format("{:.1f}", res.one_way_seconds.mad * 1e9) : "");
  }
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
  out += "\n  core-to-core pairs:";
  for (const auto& p : plan.c2c_pairs) {
    out += fmt::format(" {}<->{} ({}, line on node {})", p.cpu_a, p.cpu_b, k::CpuRelationName(p.relation),
                       p.line_node);
  }
  out += '\n';
  for (const auto& n : plan.notes) out += "  note: " + n + '\n';
  return out;
}

std::string FormatReport(const ProbeReport& report) {
  Footnotes notes;
  std::string out = LatencySection(report, notes);
  out += BandwidthSection(report, notes);
  out += C2cSection(report, notes);
  const std::string failures = notes.Render();
  if (!failures.empty()) out += "Failed probes\n" + failures;
  return out;
}

}  // namespace numaprobe::daemon
