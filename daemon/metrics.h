// The Prometheus view of a Snapshot. Every contract family (names, labels,
// HELP) is defined here and in metrics_health.cc; tests/fixtures/metrics.golden
// pins the exact output and promtool lints it.
//
// A scrape only reads: MetricsText copies the store's current shared_ptr and
// formats it. It never starts or waits for a probe (ecosystem notes §1.3),
// which is why every HELP says the value comes from the last scheduled probe.
//
// Thread safety: BuildFamilies and ProcessFamilies are pure/reentrant;
// MetricsText::Render may run on any number of threads at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "daemon/result_store.h"
#include "daemon/snapshot.h"

namespace numaprobe::daemon {

// Every numaprobe_* family for `snapshot`, in a fixed order, series sorted.
// Families known in advance are present even without series.
std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot);

// The parts of BuildFamilies, one per file: measured figures and baseline
// (metrics.cc), self-description and health (metrics_health.cc).
void AppendMeasurementFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
void AppendHealthFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);

// The standard process_* families of the client libraries, read from
// <proc_root>/self and <proc_root>/stat (prometheus-cpp has no such
// collector). A file that cannot be read drops its families, never the scrape.
std::vector<prometheus::MetricFamily> ProcessFamilies(const std::string& proc_root = "/proc");

// The text exposition served on the telemetry path. The snapshot's families
// change only when the scheduler publishes (after a probe), so their text is
// rendered once per snapshot and shared by every scrape until the next one;
// only the process_* families are read afresh. This keeps a burst of
// concurrent scrapes from re-serialising the same figures each time.
class MetricsText {
 public:
  // `store` must outlive this object.
  explicit MetricsText(const ResultStore& store) : store_(store) {}

  std::string Render() const;

 private:
  const ResultStore& store_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Snapshot> rendered_for_;  // guarded by mu_
  mutable std::shared_ptr<const std::string> text_;       // guarded by mu_
};

}  // namespace numaprobe::daemon
