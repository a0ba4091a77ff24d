#include "daemon/web/landing_page.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "daemon/common/version.h"
#include "kernels/bandwidth.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

// Row (cpu_node, cpu; cpu -1 unless per-CPU mode) -> mem_node -> (value, when).
using Row = std::pair<int, int>;
using Matrix = std::map<Row, std::map<int, std::pair<double, double>>>;

std::string Format(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

void Put(Matrix& matrix, Row row, int mem_node, double value, double when) {
  auto [it, inserted] = matrix[row].try_emplace(mem_node, value, when);
  if (!inserted && when > it->second.second) it->second = {value, when};
}

// Columns: every planned memory node (from the distances) and every measured
// one, so a planned pair without a figure shows as a gap rather than vanishing.
std::set<int> Columns(const Snapshot& s, const Matrix& matrix) {
  std::set<int> columns;
  for (const auto& [pair, distance] : s.distances) columns.insert(pair.second);
  for (const auto& [row, cells] : matrix) {
    for (const auto& [mem_node, cell] : cells) columns.insert(mem_node);
  }
  return columns;
}

std::string RenderMatrix(const Snapshot& s, const std::string& title, Matrix matrix, double scale, int decimals) {
  std::string html = "<h2>" + HtmlEscape(title) + "</h2>\n";
  if (matrix.empty()) return html + "<p>No figures yet.</p>\n";
  const std::set<int> columns = Columns(s, matrix);
  // Planned CPU nodes without any figure get an empty row, like columns.
  if (!s.per_cpu) {
    for (const auto& [pair, distance] : s.distances) matrix.try_emplace(Row{pair.first, -1});
  }
  html += "<table>\n<tr><th>CPU \\ memory</th>";
  for (int mem_node : columns) html += "<th>node " + std::to_string(mem_node) + "</th>";
  html += "</tr>\n";
  for (const auto& [row, cells] : matrix) {
    const auto& [cpu_node, cpu] = row;
    html += "<tr><th>";
    html += cpu >= 0 ? "cpu " + std::to_string(cpu) + " (node " + std::to_string(cpu_node) + ")"
                     : "node " + std::to_string(cpu_node);
    html += "</th>";
    for (int mem_node : columns) {
      const auto cell = cells.find(mem_node);
      html += "<td>" + (cell == cells.end() ? std::string("&ndash;") : Format(cell->second.first * scale, decimals)) +
              "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

// read, write, copy first (the order the probes run), then anything else.
int OpRank(const std::string& op) {
  static const std::string kOrder[] = {"read", "write", "copy"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), op);
  return static_cast<int>(it - std::begin(kOrder));
}

std::string RenderMatrices(const Snapshot& s) {
  Matrix latency;
  for (const Timed<LatencyRecord>& t : s.latency) {
    if (t.record.result.outcome != k::Outcome::kOk) continue;
    const MemoryPair& p = t.record.pair;
    Put(latency, {p.cpu_node, s.per_cpu ? p.cpu : -1}, p.mem_node, t.record.result.seconds_per_load.median,
        t.unix_seconds);
  }
  std::map<std::pair<int, std::string>, Matrix> bandwidth;  // (rank, op) -> matrix
  for (const Timed<BandwidthRecord>& t : s.bandwidth) {
    if (t.record.result.outcome != k::Outcome::kOk) continue;
    const MemoryPair& p = t.record.pair;
    const std::string op(k::BandwidthOpName(t.record.result.op));
    Put(bandwidth[{OpRank(op), op}], {p.cpu_node, s.per_cpu ? p.cpu : -1}, p.mem_node,
        t.record.result.bytes_per_second.median, t.unix_seconds);
  }
  std::string html = RenderMatrix(s, "Memory latency (ns, median)", latency, 1e9, 1);
  const std::string threads =
      s.bandwidth_threads > 1 ? ", up to " + std::to_string(s.bandwidth_threads) + " threads" : "";
  for (const auto& [key, matrix] : bandwidth) {
    html += RenderMatrix(s, "Memory bandwidth, " + key.second + " (GB/s, median" + threads + ")", matrix, 1e-9, 2);
  }
  if (bandwidth.empty()) html += "<h2>Memory bandwidth (GB/s)</h2>\n<p>No figures yet.</p>\n";
  return html;
}

std::string RenderCoreToCore(const Snapshot& s) {
  if (s.c2c.empty()) return "";
  std::string html =
      "<h2>Core-to-core latency (ns, one way, median)</h2>\n<table>\n"
      "<tr><th>cpu a</th><th>cpu b</th><th>line on node</th><th>relation</th><th>ns</th></tr>\n";
  for (const Timed<C2cRecord>& t : s.c2c) {
    if (t.record.result.outcome != k::Outcome::kOk) continue;
    const C2cPair& p = t.record.pair;
    html += "<tr><td>" + std::to_string(p.cpu_a) + "</td><td>" + std::to_string(p.cpu_b) + "</td><td>" +
            std::to_string(p.line_node) + "</td><td>" + HtmlEscape(k::CpuRelationName(p.relation)) + "</td><td>" +
            Format(t.record.result.one_way_seconds.median * 1e9, 1) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

std::string Field(const std::string& name, const std::string& value) {
  return "<tr><th>" + HtmlEscape(name) + "</th><td>" + HtmlEscape(value) + "</td></tr>\n";
}

std::string RenderHost(const Snapshot& s) {
  const HostInfo& h = s.host;
  return "<h2>Host</h2>\n<table class=\"facts\">\n" + Field("CPU model", h.cpu_model) + Field("Kernel", h.kernel) +
         Field("Microcode", h.microcode) + Field("Virtualized", h.virtualized ? "yes" : "no") +
         Field("Transparent huge pages", h.thp) + Field("Clock source", h.clocksource) +
         Field("Fingerprint", s.fingerprint) +
         Field("Baseline", s.baseline_origin + (s.baseline_complete ? " (complete)" : " (incomplete)")) +
         Field("Probe rounds completed", std::to_string(s.rounds_completed)) +
         Field("Probe CPU (share of one CPU, trailing 10 min / budget)",
               Format(s.duty_cycle_ratio * 100, 3) + "% / " + Format(s.duty_cycle_budget_ratio * 100, 3) + "%") +
         "</table>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderLandingPage(const Snapshot& s, const std::string& telemetry_path) {
  const std::string metrics = HtmlEscape(telemetry_path);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>numaprobe</title>\n"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
      "th,td{border:1px solid #ccc;padding:.2em .6em}td{text-align:right}.facts td{text-align:left}"
      "th{background:#f3f3f3;text-align:left}</style>\n</head>\n<body>\n<h1>numaprobe</h1>\n"
      "<p>NUMA memory latency, bandwidth and core-to-core latency exporter for Prometheus. Version " +
      HtmlEscape(kVersion) + " (revision " + HtmlEscape(kRevision) + ").</p>\n<ul>\n<li><a href=\"" + metrics +
      "\">Metrics</a> (" + metrics +
      ")</li>\n<li><a href=\"/-/healthy\">Health</a> (/-/healthy)</li>\n"
      "<li><a href=\"/-/ready\">Readiness</a> (/-/ready)</li>\n</ul>\n";
  html += RenderHost(s);
  html +=
      "<p><em>Figures come from the last scheduled probe of each pair, not from this page load: probes run on "
      "their own low duty-cycle schedule and are never triggered by a request.</em></p>\n";
  if (!s.ready()) html += "<p><strong>The first probe round has not completed yet.</strong></p>\n";
  html += RenderMatrices(s);
  html += RenderCoreToCore(s);
  return html + "</body>\n</html>\n";
}

}  // namespace numaprobe::daemon
