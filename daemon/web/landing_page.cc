// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/landing_page.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "daemon/common/markup_escape.h"
#include "daemon/common/version.h"
#include "daemon/output/hmat_report.h"
#include "daemon/output/interleave_weights.h"
#include "daemon/probing/probe_table.h"
#include "daemon/web/metrics.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;

std::string Format(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// One kind's section as an HTML table; cells are the same strings the
// terminal table prints.
std::string RenderSection(const ReportSection& section) {
  std::string html =
      "<h2>" + EscapeMarkup(section.title) + "</h2>\n<table>\n<tr><th>" + EscapeMarkup(section.corner) + "</th>";
  for (const auto& column : section.columns) html += "<th>" + EscapeMarkup(column) + "</th>";
  html += "</tr>\n";
  for (std::size_t row = 0; row < section.row_labels.size(); ++row) {
    html += "<tr><th>" + EscapeMarkup(section.row_labels[row]) + "</th>";
    for (const auto& cell : section.cells[row]) html += "<td>" + EscapeMarkup(cell == "-" ? "\u2013" : cell) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

// Every kind's sections over its published records, in probe-table order; a
// kind the daemon probes without figures yet says so.
std::string RenderFigures(const Snapshot& s) {
  std::string html;
  for (const ProbeKind* kind : ProbeTable()) {
    if (!s.probes.contains(std::string(kind->name()))) continue;
    std::vector<RecordPtr> records;
    for (const TimedRecord& t : s.FiguresOf(*kind)) records.push_back(t.record);
    const std::vector<ReportSection> sections = kind->Sections(records);
    if (sections.empty()) {
      std::string title(kind->traits().title);
      title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
      html += "<h2>" + EscapeMarkup(title) + "</h2>\n<p>No figures yet.</p>\n";
    }
    for (const ReportSection& section : sections) html += RenderSection(section);
  }
  std::vector<RecordPtr> records;
  for (const Timed& t : s.figures) records.push_back(t.record);
  for (const ReportSection& section : HmatSections(s.host.hmat, records)) html += RenderSection(section);
  for (const ReportSection& section : InterleaveSections(records, InterleaveHostOf(s))) html += RenderSection(section);
  return html;
}

std::string Field(const std::string& name, const std::string& value) {
  return "<tr><th>" + EscapeMarkup(name) + "</th><td>" + EscapeMarkup(value) + "</td></tr>\n";
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

// What the host looks like now and what changed since the baseline: the
// first place to look when a figure drifts.
std::string RenderHostFacts(const Snapshot& s) {
  std::string html = "<h2>Host facts</h2>\n<table class=\"facts\">\n";
  for (const auto& [field, value] : s.runtime_facts.fields) html += Field(field, value);
  html += "</table>\n";
  if (s.host_changes.empty()) return html;
  html +=
      "<h2>Host changes since the baseline</h2>\n<table class=\"facts\">\n<tr><th>field</th><th>before</th>"
      "<th>after</th><th>seen (Unix time)</th></tr>\n";
  for (const HostChange& c : s.host_changes) {
    html += "<tr><th>" + EscapeMarkup(c.field) + "</th><td>" + EscapeMarkup(c.before) + "</td><td>" +
            EscapeMarkup(c.after) + "</td><td>" + Format(c.unix_seconds, 0) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string RenderLandingPage(const Snapshot& s, const std::string& telemetry_path) {
  const std::string metrics = EscapeMarkup(telemetry_path);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>numaprobe</title>\n"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
      "th,td{border:1px solid #ccc;padding:.2em .6em}td{text-align:right}.facts td{text-align:left}"
      "th{background:#f3f3f3;text-align:left}</style>\n</head>\n<body>\n<h1>numaprobe</h1>\n"
      "<p>NUMA memory latency, bandwidth and core-to-core latency exporter for Prometheus. Version " +
      EscapeMarkup(kVersion) + " (revision " + EscapeMarkup(kRevision) + ").</p>\n<ul>\n<li><a href=\"" + metrics +
      "\">Metrics</a> (" + metrics +
      ")</li>\n<li><a href=\"/-/healthy\">Health</a> (/-/healthy)</li>\n"
      "<li><a href=\"/-/ready\">Readiness</a> (/-/ready)</li>\n</ul>\n";
  html += RenderHost(s);
  html +=
      "<p><em>Figures come from the last scheduled probe of each pair, not from this page load: probes run on "
      "their own low duty-cycle schedule and are never triggered by a request.</em></p>\n";
  if (!s.ready()) html += "<p><strong>The first probe round has not completed yet.</strong></p>\n";
  html += RenderFigures(s);
  html += RenderHostFacts(s);
  return html + "</body>\n</html>\n";
}

}  // namespace numaprobe::daemon
