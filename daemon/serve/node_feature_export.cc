// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/node_feature_export.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "daemon/common/atomic_replace.h"

namespace numaprobe::daemon {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

std::string PathOf(const std::string& dir) { return dir + "/" + NodeFeatureExport::kFileName; }

std::vector<RecordPtr> RecordsOf(const Snapshot& s) {
  std::vector<RecordPtr> records;
  records.reserve(s.figures.size());
  for (const Timed& t : s.figures) records.push_back(t.record);
  return records;
}

}  // namespace

std::optional<std::chrono::milliseconds> NodeFeatureExport::Tick(const std::string& directory, double now_unix,
                                                                 std::int64_t now_ns) {
  if (directory != directory_) SwitchTo(directory);
  if (directory_.empty()) return std::nullopt;
  const std::shared_ptr<const Snapshot> snapshot = store_.Current();
  // Before the first round every feature but one would be missing: a file
  // then would take the labels of a restarted daemon away for nothing.
  if (!snapshot->ready()) return kUntilReady;
  const double refresh_seconds = std::max(snapshot->refresh_interval_seconds, kMinRefreshSeconds);
  const std::vector<NodeFeature> features = NodeFeaturesOf(RecordsOf(*snapshot), snapshot->baseline_complete);
  const bool stale = now_ns - written_ns_ >= static_cast<std::int64_t>(refresh_seconds * kNsPerSecond);
  if (failing_ || !written_ || *written_ != features || stale) Write(features, refresh_seconds, now_unix, now_ns);
  return kCheck;
}

void NodeFeatureExport::Write(const std::vector<NodeFeature>& features, double refresh_seconds, double now_unix,
                              std::int64_t now_ns) {
  const double expiry = now_unix + kExpiryRefreshes * refresh_seconds;
  const std::string error = ReplaceFileAtomically(directory_, kFileName, NodeFeatureFileText(features, expiry),
                                                  {.mode = 0644, .what = "node feature directory"});
  if (error.empty()) {
    if (failing_ || !written_) {
      spdlog::info("node features written to {} ({} features; NFD drops them {:.0f} s after the last write)",
                   PathOf(directory_), features.size(), expiry - now_unix);
    }
    written_ = features;
    written_ns_ = now_ns;
  } else if (error != last_error_) {
    spdlog::error("cannot write the node feature file {}: {}; retrying every {} s", PathOf(directory_), error,
                  kCheck.count());
  }
  if (error.empty() && !failing_) return;  // a routine rewrite: nothing new to publish
  failing_ = !error.empty();
  last_error_ = error;
  store_.Update([ok = !failing_](Snapshot& s) {
    s.node_features_write_successful = ok;
    if (!ok) ++s.node_features_write_failures_total;
  });
}

void NodeFeatureExport::SwitchTo(const std::string& directory) {
  // The old directory's file would hold its labels until the expiry: take it
  // away now, since the operator moved or switched off the export.
  if (written_) {
    if (::unlink(PathOf(directory_).c_str()) == 0) {
      spdlog::info("node features no longer written to {}: removed {}", directory_, PathOf(directory_));
    } else if (errno != ENOENT) {
      spdlog::warn("node features no longer written to {}, but cannot remove {}: {}", directory_, PathOf(directory_),
                   std::strerror(errno));
    }
  }
  if (directory.empty() && !directory_.empty()) spdlog::info("node feature file switched off");
  directory_ = directory;
  written_.reset();
  written_ns_ = 0;
  const bool was_failing = failing_;
  failing_ = false;
  last_error_.clear();
  if (was_failing) store_.Update([](Snapshot& s) { s.node_features_write_successful = true; });
}

}  // namespace numaprobe::daemon
