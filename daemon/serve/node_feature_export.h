// SPDX-License-Identifier: Apache-2.0
// Keeps <node_feature_directory>/numaprobe, the Node Feature Discovery
// feature file (output/node_features.h), in step with the published
// snapshot: one more reader of the published view, like a scrape. `serve`'s
// main thread calls Tick between signals; nothing here probes or waits.
//
// When: once the first round has completed, then whenever the features
// change (looked for every kCheck) and at least once per refresh interval
// (the snapshot's, at least kMinRefresh) so that the expiry, kExpiryRefreshes
// refresh intervals after each write, never lapses while the daemon runs.
// A stopped or hung daemon's labels lapse when it passes; a clean stop leaves
// the file (a restart must not make the labels flap).
//
// The directory is NFD's (hostPath in Kubernetes): it is never created. A
// write that fails (missing or read-only directory, full disk) is logged
// with the path and errno when the reason changes, counted
// (numaprobe_node_features_write_failures_total), shown
// (numaprobe_node_features_last_write_successful 0) and retried at the next
// check; the daemon's probing and serving go on. A directory changed or
// cleared by a reload takes the file out of the old one.
//
// Thread safety: one thread (serve's main thread) calls Tick.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/output/node_features.h"
#include "daemon/serve/result_store.h"

namespace numaprobe::daemon {

class NodeFeatureExport {
 public:
  explicit NodeFeatureExport(ResultStore& store) : store_(store) {}

  // Brings the file in `directory` ("" = off) up to date at wall time
  // `now_unix` (the expiry) and monotonic `now_ns` (the cadence). Returns the
  // time until the next call is due; nullopt while off.
  std::optional<std::chrono::milliseconds> Tick(const std::string& directory, double now_unix, std::int64_t now_ns);

  static constexpr const char* kFileName = "numaprobe";
  static constexpr std::chrono::seconds kCheck{30};
  static constexpr std::chrono::seconds kUntilReady{5};
  static constexpr double kMinRefreshSeconds = 60;
  static constexpr int kExpiryRefreshes = 3;

 private:
  void SwitchTo(const std::string& directory);
  void Write(const std::vector<NodeFeature>& features, double refresh_seconds, double now_unix, std::int64_t now_ns);

  ResultStore& store_;
  std::string directory_;
  std::optional<std::vector<NodeFeature>> written_;  // what the file holds, once a write succeeded
  std::int64_t written_ns_ = 0;                      // monotonic time of that write
  bool failing_ = false;
  std::string last_error_;
};

}  // namespace numaprobe::daemon
