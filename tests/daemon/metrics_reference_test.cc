// SPDX-License-Identifier: Apache-2.0
// docs/metrics.md against the daemon's own families: one table row per family
// the daemon can export, with its type, its labels and its HELP text as the
// row's meaning. The families come from BuildFamilies() over the snapshots of
// ReferenceStates() below (every kind probed, per-CPU mode, several threads,
// before the first round, ...), plus the process_* families and the HTTPS
// listeners' counter, so a label that appears only in one state is still
// enumerated.
//
// When it fails it prints the exact row to add or the row to replace. A
// family or label that appears only in a state no snapshot here is in needs
// that state added to ReferenceStates(): the test also fails on a family
// that no state gives a series (its labels would be unknown).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/kinds/interleave_result.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/probing/kinds/peak_thread_search.h"
#include "daemon/serve/snapshot_update.h"
#include "daemon/web/metrics.h"
#include "daemon/web/password_checks.h"
#include "daemon/web/tls_handshake_failures.h"
#include "kernels/loaded_latency.h"
#include "tests/daemon/metrics_test_util.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using prometheus::MetricFamily;

const std::filesystem::path kDoc =
    std::filesystem::path(NUMAPROBE_FIXTURES).parent_path().parent_path() / "docs" / "metrics.md";

// What the daemon says about one family, over every state.
struct Exported {
  std::string type;
  std::string help;
  std::set<std::string> labels;
  bool has_series = false;
  std::string first_state;  // the first state it appeared in, for messages
};

// What docs/metrics.md says about one family.
struct Row {
  int line = 0;
  std::string type;
  std::set<std::string> labels;
  std::string labels_cell;
  std::string meaning;
  std::string absent;
};

std::string TypeName(prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Histogram:
      return "histogram";
    case prometheus::MetricType::Summary:
      return "summary";
    default:
      return "untyped";
  }
}

// HELP text as a Markdown table cell shows it verbatim.
std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '*':
        out += "\\*";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string LabelsCell(const std::set<std::string>& labels) {
  if (labels.empty()) return "none";
  std::string cell;
  for (const std::string& label : labels) cell += (cell.empty() ? "`" : ", `") + label + "`";
  return cell;
}

constexpr const char* kFillIn = "WHEN ABSENT: say when this family has no series";

std::string RowText(const std::string& name, const Exported& e, const std::string& labels_cell,
                    const std::string& absent) {
  return "| `" + name + "` | " + e.type + " | " + labels_cell + " | " + MarkdownCell(e.help) + " | " + absent + " |";
}

// ---- The states whose union is "every family the daemon can export". ----

// A record of every kind, through the daemon's own RecordRun, so that
// numaprobe_probe_config_info carries each kind's real labels.
void RecordOneRunOfEveryKind(Snapshot& s) {
  k::LatencyResult latency;
  latency.seconds_per_load = {1e-7, 0.9e-7, 1.1e-7, 1e-9, 7};
  RecordRun(s, MakeLatency({3, 0, 0}, latency), 1700000400, 0.01);

  k::BandwidthResult bandwidth;
  bandwidth.op = k::BandwidthOp::kRead;
  bandwidth.cpus = {3};
  bandwidth.bytes_per_second = {2e10, 1.9e10, 2.1e10, 1e8, 5};
  RecordRun(s, MakeBandwidth({3, 0, 0}, bandwidth), 1700000400, 0.01);

  k::C2cResult c2c;
  c2c.cpu_a = 1;
  c2c.cpu_b = 3;
  c2c.one_way_seconds = {5e-8, 4e-8, 6e-8, 1e-9, 7};
  RecordRun(s, MakeC2c({1, 3, 0, k::CpuRelation::kSameNode}, 0, c2c), 1700000400, 0.01);

  k::LoadedLatencyResult loaded;
  loaded.load_cpus = {1, 2};
  loaded.reference.delay_ns = k::kNoTrafficDelay;
  loaded.reference.seconds_per_load = {1e-7, 0.9e-7, 1.1e-7, 1e-9, 5};
  loaded.reference.load_bytes_per_second = {0, 0, 0, 0, 5};
  k::LoadedLatencyPoint point;
  point.delay_ns = 0;
  point.seconds_per_load = {2e-7, 1.9e-7, 2.1e-7, 1e-9, 5};
  point.load_bytes_per_second = {1e10, 0.9e10, 1.1e10, 1e8, 5};
  loaded.points = {point};
  RecordRun(s,
            std::make_shared<ProbeRecordOf<k::LoadedLatencyResult>>(LoadedLatencyProbe(),
                                                                    MemoryTarget({3, 0, 0}, "read"), loaded),
            1700000400, 0.05);

  PeakResult peak;
  peak.op = k::BandwidthOp::kRead;
  peak.cpus = {2, 3};
  peak.bytes_per_second = {8e10, 7.9e10, 8.1e10, 1e8, 5};
  RecordRun(s, std::make_shared<ProbeRecordOf<PeakResult>>(PeakBandwidthProbe(), MemoryTarget({3, 0, 0}, "read"), peak),
            1700000400, 0.5);

  InterleaveResult interleaved;
  interleaved.cpus = {2, 3};
  interleaved.bytes_per_second = {9e10, 8.9e10, 9.1e10, 1e8, 5};
  interleaved.weights = {{0, 1}};
  interleaved.buffer.placement.node_shares = {{0, 1.0}};
  interleaved.best_node = BestNodePeak{0, 8e10};
  RecordRun(s,
            std::make_shared<ProbeRecordOf<InterleaveResult>>(InterleaveBandwidthProbe(),
                                                              MemoryTarget({3, 0, -1}, "read"), interleaved),
            1700000400, 0.5);
}

// Every kind probed, with peer medians (the remote/local ratio) and a
// recording baseline's worst-pair drift: the golden snapshot and more.
Snapshot EveryKind() {
  Snapshot s = FixedSnapshot();
  s.probes.insert(std::string(LoadedLatencyProbe().name()));
  s.probes.insert(std::string(PeakBandwidthProbe().name()));
  s.probes.insert(std::string(InterleaveBandwidthProbe().name()));
  RecordOneRunOfEveryKind(s);
  s.peer_medians = {{"latency", -1, 0, 0, "", 0.9e-7}, {"latency", -1, 0, 1, "", 1.35e-7}};
  // Peak bandwidth's baseline families (a kind the golden snapshot does not probe).
  s.baseline.push_back({"peak_bandwidth", -1, 0, 0, "read", 8.2e10});
  s.baseline_spread.push_back({"peak_bandwidth", -1, 0, 0, "read", 0.02});
  s.recent_medians.push_back({"peak_bandwidth", -1, 0, 0, "read", 7.0e10});
  return WithDerived(s);
}

Snapshot PerCpuEveryKind() {
  Snapshot s = PerCpuSnapshot(2);
  s.probes.insert(std::string(LoadedLatencyProbe().name()));
  s.probes.insert(std::string(PeakBandwidthProbe().name()));
  s.probes.insert(std::string(InterleaveBandwidthProbe().name()));
  RecordOneRunOfEveryKind(s);
  s.peer_medians = {{"latency", 2, 0, 0, "", 1.0e-7}, {"latency", 2, 0, 1, "", 1.5e-7}};
  return WithDerived(s);
}

Snapshot LockHeld() {
  Snapshot s = EveryKind();
  s.probe_lock_holder = ProbeLockHolder{4321, 1000, "flock"};
  return s;
}

// Linux 6.16 with its auto weights, both nodes with memory and the peak of
// both from node 0's CPUs: every interleave weight source and the ratio.
Snapshot WeightedInterleaveHost() {
  Snapshot s = EveryKind();
  s.runtime_facts.nodes[1].mem_total_bytes = 8589934592ULL;
  s.runtime_facts.weighted_interleave = WeightedInterleave{true, {{0, 1}, {1, 1}}};
  // Node 0's CPUs to both nodes, node 1's to its own memory: the per-CPU-node
  // and the nearest vectors.
  for (const auto& [cpu_node, mem_node] : {std::pair{0, 0}, {0, 1}, {1, 1}}) {
    for (const k::BandwidthOp op : {k::BandwidthOp::kRead, k::BandwidthOp::kWrite}) {
      PeakResult peak;
      peak.op = op;
      peak.cpus = cpu_node == 0 ? std::vector<int>{2, 3} : std::vector<int>{4, 5};
      peak.bytes_per_second = {cpu_node == mem_node ? 8e10 : 4e10, 0, 0, 1e8, 5};
      RecordRun(s, MakePeak({cpu_node == 0 ? 3 : 5, cpu_node, mem_node}, peak), 1700000400, 0.5);
    }
  }
  return s;
}

std::vector<std::pair<std::string, Snapshot>> ReferenceStates() {
  return {
      {"before the first round (an empty snapshot)", Snapshot{}},
      {"every kind probed, node pairs, a restored baseline, host changes, HMAT, EDAC", EveryKind()},
      {"every kind probed in per-CPU mode with 2 bandwidth threads", PerCpuEveryKind()},
      {"a probe waiting for the probe lock another process holds", LockHeld()},
      {"weighted interleave with the peak of every memory node", WeightedInterleaveHost()},
  };
}

// A /proc with the files ProcessMetrics reads, so that every process_*
// family is there whatever the machine (qemu-user fakes /proc/self/stat).
std::filesystem::path FakeProcRoot() {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("numaprobe-reference-proc-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "self" / "fd");
  std::ofstream(root / "self" / "fd" / "0") << "";
  std::ofstream(root / "stat") << "cpu 1 2 3 4\nbtime 1700000000\n";
  std::ofstream(root / "self" / "stat")
      << "4242 (numaprobe serve) S 1 4242 4242 0 -1 4194560 500 0 0 0 25 12 0 0 20 0 7 0 1234 "
         "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  return root;
}

std::map<std::string, Exported> DaemonFamilies(std::vector<std::string>& conflicts) {
  std::map<std::string, Exported> out;
  const auto add = [&](const std::string& state, const std::vector<MetricFamily>& families) {
    for (const MetricFamily& f : families) {
      auto [it, inserted] = out.try_emplace(f.name, Exported{TypeName(f.type), f.help, {}, false, state});
      Exported& e = it->second;
      if (!inserted && (e.type != TypeName(f.type) || e.help != f.help)) {
        conflicts.push_back(f.name + ": its HELP or type in state \"" + state + "\" differs from state \"" +
                            e.first_state + "\"; a family has one HELP text and one type");
      }
      for (const auto& metric : f.metric) {
        e.has_series = true;
        for (const auto& label : metric.label) e.labels.insert(label.name);
      }
    }
  };
  for (const auto& [state, snapshot] : ReferenceStates()) add(state, BuildFamilies(snapshot));
  const std::filesystem::path proc = FakeProcRoot();
  add("process families (MetricsText, at every scrape)", ProcessMetrics(proc.string()).Families());
  std::filesystem::remove_all(proc);
  const TlsHandshakeFailures tls_failures;
  add("HTTPS listeners (MetricsText, at every scrape)", {tls_failures.Family()});
  const PasswordChecks password_checks;
  add("password checks (MetricsText, at every scrape)", {password_checks.Family()});
  return out;
}

// ---- docs/metrics.md ----

std::vector<std::string> SplitCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {  // past the leading '|'
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  for (std::string& c : cells) {
    const auto begin = c.find_first_not_of(' ');
    const auto end = c.find_last_not_of(' ');
    c = begin == std::string::npos ? "" : c.substr(begin, end - begin + 1);
  }
  return cells;
}

// Rows whose first cell is a backticked family name.
std::map<std::string, Row> DocRows(const std::string& text, std::vector<std::string>& problems) {
  static const std::regex kName("^`((numaprobe|process)_[a-z0-9_]+)`$");
  static const std::regex kLabel("`([a-zA-Z_][a-zA-Z0-9_]*)`");
  std::map<std::string, Row> rows;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> cells = SplitCells(line);
    std::smatch name;
    if (cells.empty() || !std::regex_match(cells[0], name, kName)) continue;
    if (cells.size() != 5) {
      problems.push_back("docs/metrics.md:" + std::to_string(number) + ": the row of " + name[1].str() + " has " +
                         std::to_string(cells.size()) +
                         " cells; a row is | family | type | labels | meaning | absent when |");
      continue;
    }
    Row row{number, cells[1], {}, cells[2], cells[3], cells[4]};
    for (auto it = std::sregex_iterator(cells[2].begin(), cells[2].end(), kLabel); it != std::sregex_iterator(); ++it) {
      row.labels.insert((*it)[1].str());
    }
    if (!rows.emplace(name[1].str(), row).second) {
      problems.push_back("docs/metrics.md:" + std::to_string(number) + ": a second row for " + name[1].str());
    }
  }
  return rows;
}

std::string ReadDoc() {
  std::ifstream in(kDoc);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MetricsReference, EveryStateGivesEveryFamilyOneHelpAndType) {
  std::vector<std::string> conflicts;
  const auto families = DaemonFamilies(conflicts);
  EXPECT_TRUE(conflicts.empty()) << ::testing::PrintToString(conflicts);
  for (const auto& [name, e] : families) {
    EXPECT_TRUE(e.has_series) << name
                              << " has no series in any state of ReferenceStates() "
                                 "(tests/daemon/metrics_reference_test.cc), so its labels cannot be listed: add a "
                                 "state in which the daemon exports it";
  }
}

// Every problem of `doc` against `families`, each naming the row to write.
std::vector<std::string> CompareWithDoc(const std::map<std::string, Exported>& families, const std::string& doc) {
  std::vector<std::string> problems;
  const auto rows = DocRows(doc, problems);
  for (const auto& [name, e] : families) {
    const auto it = rows.find(name);
    if (it == rows.end()) {
      problems.push_back("docs/metrics.md has no row for " + name + "; add this row to the table of its section " +
                         "and say when it is absent:\n    " + RowText(name, e, LabelsCell(e.labels), kFillIn));
      continue;
    }
    const Row& row = it->second;
    std::vector<std::string> why;
    if (row.type != e.type) why.push_back("its type is " + e.type + ", not " + row.type);
    if (row.labels != e.labels) {
      why.push_back("its labels are " + LabelsCell(e.labels) + ", not " + LabelsCell(row.labels));
    }
    if (row.meaning != MarkdownCell(e.help)) why.push_back("its meaning must be the family's HELP text, verbatim");
    if (row.absent.empty() || row.absent == kFillIn) why.push_back("say when it is absent (the last cell)");
    if (why.empty()) continue;
    std::string reasons;
    for (const std::string& w : why) reasons += (reasons.empty() ? "" : "; ") + w;
    // Keep the row's own wording of its labels (notes such as "per-CPU mode")
    // when the label names are right.
    const std::string labels_cell = row.labels == e.labels ? row.labels_cell : LabelsCell(e.labels);
    const std::string absent = row.absent.empty() ? kFillIn : row.absent;
    problems.push_back("docs/metrics.md:" + std::to_string(row.line) + ": the row of " + name + " is out of date (" +
                       reasons + "); replace it with:\n    " + RowText(name, e, labels_cell, absent));
  }
  for (const auto& [name, row] : rows) {
    if (families.contains(name)) continue;
    problems.push_back("docs/metrics.md:" + std::to_string(row.line) + ": " + name +
                       " is not a family the daemon exports in any state of ReferenceStates() "
                       "(tests/daemon/metrics_reference_test.cc): remove the row, or add the state that exports it");
  }
  return problems;
}

std::string Lines(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += p + "\n";
  return text;
}

TEST(MetricsReference, DocsMetricsHasOneMatchingRowPerFamily) {
  ASSERT_TRUE(std::filesystem::exists(kDoc)) << kDoc;
  std::vector<std::string> conflicts;  // reported by the test above
  const std::vector<std::string> problems = CompareWithDoc(DaemonFamilies(conflicts), ReadDoc());
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

// The check itself on a small document: a missing row, an outdated one and a
// stray one are each reported with the row to write.
TEST(MetricsReference, ReportsMissingOutdatedAndStrayRows) {
  const std::map<std::string, Exported> families = {
      {"numaprobe_build_info", {"gauge", "Version of <dir>; always 1.", {"revision", "version"}, true, "s"}},
      {"numaprobe_rounds_completed_total", {"counter", "Rounds | done.", {}, true, "s"}},
      {"numaprobe_baseline_complete", {"gauge", "1 once recorded.", {}, true, "s"}}};
  const std::string doc =
      "| family | type | labels | meaning | absent when |\n"
      "| `numaprobe_build_info` | gauge | `version` | Old text. | never |\n"
      "| `numaprobe_rounds_completed_total` | counter | none | Rounds \\| done. | never |\n"
      "| `numaprobe_gone` | gauge | none | x | never |\n";
  const std::vector<std::string> problems = CompareWithDoc(families, doc);
  const std::string text = Lines(problems);
  ASSERT_EQ(problems.size(), 3u) << text;
  EXPECT_NE(text.find("no row for numaprobe_baseline_complete; add this row to the table of its section and say when "
                      "it is absent:\n    | `numaprobe_baseline_complete` | gauge | none | 1 once recorded. | " +
                      std::string(kFillIn) + " |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("docs/metrics.md:2: the row of numaprobe_build_info is out of date (its labels are `revision`, "
                      "`version`, not `version`; its meaning must be the family's HELP text, verbatim); replace it "
                      "with:\n    | `numaprobe_build_info` | gauge | `revision`, `version` | Version of &lt;dir&gt;; "
                      "always 1. | never |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("docs/metrics.md:4: numaprobe_gone is not a family the daemon exports"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace numaprobe::daemon
