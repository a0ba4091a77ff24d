// SPDX-License-Identifier: Apache-2.0
// The Prometheus view of a Snapshot. Every contract family (names, labels,
// HELP) is defined here and in metrics_health.cc; tests/fixtures/metrics.golden
// pins the exact output and promtool lints it.
//
// A scrape only reads: MetricsText copies the store's current shared_ptr and
// formats it. It never starts or waits for a probe (a probe takes
// milliseconds to seconds of CPU and must stay within the duty-cycle budget,
// whatever the scrape rate), which is why every HELP says the value comes
// from the last scheduled probe.
//
// Thread safety: BuildFamilies and ProcessMetrics::Families are reentrant;
// MetricsText::Render may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "daemon/output/interleave_weights.h"
#include "daemon/serve/result_store.h"
#include "daemon/serve/snapshot.h"
#include "daemon/web/tls_handshake_failures.h"

namespace numaprobe::daemon {

class PasswordChecks;

// Every numaprobe_* family for `snapshot`, in a fixed order, series sorted.
// Families known in advance are present even without series.
std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot);

// The parts of BuildFamilies, one per file: measured figures and baseline
// (metrics.cc), self-description and health (metrics_health.cc).
void AppendMeasurementFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// The baseline, its spread, the host changes since it was recorded and the
// smoothed figures compared with it (metrics_baseline.cc).
void AppendBaselineFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// Per kind with a baseline (and per op), the worst pair's recent median over
// its baseline: what the drift alerts read (metrics_drift.cc).
void AppendDriftFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// Per kind compared with peers, each remote pair's remote/local ratio of the
// recent medians with the host's cohort labels: what the peer alert reads
// (metrics_peers.cc).
void AppendPeerFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// What makes hosts peers: cpu_model, numa_nodes (CPU nodes with local memory:
// SLIT distance 10) and numa_distance_sum (the sum of the distance matrix).
// Hosts of one CPU model in another SNC/NPS mode or socket count number their
// nodes differently and are not peers. On numaprobe_host_info and on the
// peer ratios, so that the rules need no join to find a host's cohort.
Labels CohortLabels(const Snapshot& snapshot);
void AppendHealthFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// The host facts and the firmware's advertised figures beside the measured
// ones (metrics_host.cc).
void AppendHostFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
// Interleave weights measured, in use and advertised (metrics_interleave.cc),
// and what they are judged against, from the snapshot (the landing page's too).
void AppendInterleaveFamilies(const Snapshot& snapshot, std::vector<prometheus::MetricFamily>& out);
InterleaveHost InterleaveHostOf(const Snapshot& snapshot);

// The standard process_* families of the client libraries, read from
// <proc_root>/self and <proc_root>/stat (prometheus-cpp has no such
// collector). A file that cannot be read drops its families, never the scrape.
class ProcessMetrics {
 public:
  // Reads the boot time, which cannot change, once.
  explicit ProcessMetrics(const std::string& proc_root = "/proc");
  std::vector<prometheus::MetricFamily> Families() const;

 private:
  std::string self_stat_path_;
  std::string fd_dir_;
  std::optional<double> boot_unix_seconds_;
};

// The text exposition served on the telemetry path. The snapshot's families
// change only when the scheduler publishes (after a probe), so their text is
// rendered once per snapshot and shared by every scrape until the next one.
// The process_* families are read at scrape time, but one reading serves every
// scrape within kProcessReuseNs: listing /proc/self/fd from dozens of threads
// at once contends on kernel locks, and a storm of concurrent scrapes (or a
// misconfigured scraper) must stay cheap. A Prometheus server scrapes a target
// every 15-60 s, so its scrapes always see a fresh reading.
// The HTTP server's own counters (TlsHandshakeFailures, PasswordChecks) are
// a few atomics, read at every scrape.
class MetricsText {
 public:
  // `store`, `tls_failures` and `password_checks` (null: no server
  // counters) must outlive this object.
  explicit MetricsText(const ResultStore& store, const TlsHandshakeFailures* tls_failures = nullptr,
                       const PasswordChecks* password_checks = nullptr)
      : store_(store), tls_failures_(tls_failures), password_checks_(password_checks) {}

  std::string Render() const;

  static constexpr std::int64_t kProcessReuseNs = 1'000'000'000;

 private:
  const ResultStore& store_;
  const TlsHandshakeFailures* const tls_failures_;
  const PasswordChecks* const password_checks_;
  const ProcessMetrics process_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Snapshot> rendered_for_;     // guarded by mu_
  mutable std::shared_ptr<const std::string> text_;          // guarded by mu_
  mutable std::shared_ptr<const std::string> process_text_;  // guarded by mu_
  mutable std::int64_t process_read_ns_ = INT64_MIN / 2;     // guarded by mu_; monotonic
};

}  // namespace numaprobe::daemon
