// SPDX-License-Identifier: Apache-2.0
// Measured figures and the baseline. Values are converted to base units here
// and nowhere else: the kernels already report seconds and bytes per second.
#include "daemon/web/metrics.h"

#include <prometheus/text_serializer.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "daemon/probing/probe_table.h"
#include "daemon/web/family_builder.h"
#include "daemon/web/password_checks.h"
#include "kernels/clock.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Labels of a (CPU, memory node) pair. `cpu` < 0: not in per-CPU mode.
Labels PairLabels(int cpu_node, int mem_node, int cpu) {
  Labels labels{{"cpu_node", Id(cpu_node)}, {"mem_node", Id(mem_node)}};
  if (cpu >= 0) labels["cpu"] = Id(cpu);
  return labels;
}

// Routes a kind's figures to the builders of the families it declared.
class BuilderSink final : public FigureSink {
 public:
  explicit BuilderSink(const std::vector<FamilySpec>& families) {
    for (const FamilySpec& f : families) {
      order_.push_back(f.name);
      builders_.emplace(f.name, FamilyBuilder(f.name, f.help, MetricType::Gauge));
    }
  }
  void Add(std::string_view family, const Labels& labels, double value, double freshness) override {
    // A kind adds only to families it declared: anything else is a
    // programming error the golden test catches as a missing series.
    const auto it = builders_.find(std::string(family));
    if (it != builders_.end()) it->second.Add(labels, value, freshness);
  }
  void BuildInto(std::vector<MetricFamily>& out) const {
    for (const std::string& name : order_) out.push_back(builders_.at(name).Build());
  }

 private:
  std::vector<std::string> order_;
  std::map<std::string, FamilyBuilder> builders_;
};

// The families of every kind the daemon probes, in probe-table order, from
// its published records; a kind it does not probe adds nothing.
void AppendFigures(const Snapshot& s, std::vector<MetricFamily>& out) {
  for (const ProbeKind* kind : ProbeTable()) {
    if (!s.probes.contains(std::string(kind->name()))) continue;
    BuilderSink sink(kind->traits().families);
    kind->AppendFigures(s.FiguresOf(*kind), s.figure_context, sink);
    sink.BuildInto(out);
  }
}

void AppendDistance(const Snapshot& s, std::vector<MetricFamily>& out) {
  FamilyBuilder distance("numaprobe_numa_distance",
                         "Firmware (ACPI SLIT) distance from cpu_node to mem_node, 10 for local, as read when the "
                         "probes were planned.",
                         MetricType::Gauge);
  for (const auto& [pair, value] : s.distances) {
    distance.Add(PairLabels(pair.first, pair.second, -1), value);
  }
  out.push_back(distance.Build());
}

}  // namespace

void AppendMeasurementFamilies(const Snapshot& snapshot, std::vector<MetricFamily>& out) {
  AppendFigures(snapshot, out);
  AppendDistance(snapshot, out);
  AppendBaselineFamilies(snapshot, out);
  AppendDriftFamilies(snapshot, out);
  AppendPeerFamilies(snapshot, out);
  AppendHostFamilies(snapshot, out);
  AppendInterleaveFamilies(snapshot, out);
}

std::vector<MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  std::vector<MetricFamily> families;
  AppendMeasurementFamilies(snapshot, families);
  AppendHealthFamilies(snapshot, families);
  return families;
}

namespace {
std::string Serialize(const std::vector<MetricFamily>& families) {
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, families);
  return text.str();
}
}  // namespace

std::string MetricsText::Render() const {
  // Holding the shared_ptr keeps this snapshot alive even if the scheduler
  // publishes a new one meanwhile.
  std::shared_ptr<const Snapshot> snapshot = store_.Current();
  const std::int64_t now_ns = kernels::MonotonicNs();
  std::shared_ptr<const std::string> text;
  std::shared_ptr<const std::string> process_text;
  {
    std::lock_guard lock(mu_);
    if (snapshot == rendered_for_) text = text_;
    if (now_ns - process_read_ns_ < kProcessReuseNs) process_text = process_text_;
  }
  if (!text) {
    text = std::make_shared<const std::string>(Serialize(BuildFamilies(*snapshot)));
    std::lock_guard lock(mu_);
    rendered_for_ = std::move(snapshot);
    text_ = text;
  }
  if (!process_text) {
    process_text = std::make_shared<const std::string>(Serialize(process_.Families()));
    std::lock_guard lock(mu_);
    process_text_ = process_text;
    process_read_ns_ = now_ns;
  }
  std::vector<MetricFamily> server;
  if (tls_failures_ != nullptr) server.push_back(tls_failures_->Family());
  if (password_checks_ != nullptr) server.push_back(password_checks_->Family());
  if (server.empty()) return *text + *process_text;
  return *text + Serialize(server) + *process_text;
}

}  // namespace numaprobe::daemon
