// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/host_record.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace numaprobe::daemon {
namespace {

// Keeps the last kMaxHostChanges: a flapping setting must not grow the state
// file or the exported series without bound.
void Append(std::vector<HostChange>& changes, HostChange change) {
  changes.push_back(std::move(change));
  if (changes.size() > kMaxHostChanges) changes.erase(changes.begin(), changes.end() - kMaxHostChanges);
}

}  // namespace

void HostRecord::Begin(const std::string& origin_now, const std::string& fingerprint_now,
                       const std::string& topology_now, const HostObservation& host, const std::string& since_now) {
  origin = origin_now;
  fingerprint = fingerprint_now;
  topology = topology_now;
  changes.clear();
  memory_errors = host.memory_errors;
  facts.clear();
  errors_since_.reset();
  since = since_now;
  Observe(host, 0, "");
}

std::vector<HostChange> HostRecord::Observe(const HostObservation& host, double unix_now, const char* reference) {
  std::map<std::string, std::string> now = host.facts;
  errors_since_.reset();
  if (!host.memory_errors) {
    now[kMemoryErrorsField] = "no_edac";
  } else {
    const MemoryErrorCounts& counts = *host.memory_errors;
    if (!memory_errors) memory_errors = counts;  // EDAC appeared: count from here
    MemoryErrorCounts& then = *memory_errors;
    if (counts.corrected < then.corrected || counts.uncorrected < then.uncorrected) {
      spdlog::warn(
          "EDAC error counters went down (corrected {} -> {}, uncorrected {} -> {}: a reboot or a driver reload); "
          "errors since the baseline are counted from zero again",
          then.corrected, counts.corrected, then.uncorrected, counts.uncorrected);
      then = MemoryErrorCounts{};
    }
    errors_since_ = MemoryErrorCounts{counts.corrected - then.corrected, counts.uncorrected - then.uncorrected};
    now[kMemoryErrorsField] = errors_since_->uncorrected > 0 ? "uncorrected"
                              : errors_since_->corrected > 0 ? "corrected"
                                                             : "none";
  }
  std::vector<HostChange> seen;
  for (const auto& [field, value] : now) {
    const auto old = facts.find(field);
    // A fact not recorded before (a state file from an older numaprobe) has
    // no "before" to compare: it is taken as it is now, not as a change.
    if (old == facts.end() || old->second == value) continue;
    HostChange change{field, old->second, value, unix_now};
    spdlog::warn("host {} changed: {} -> {}; {}", field, old->second, value, reference);
    seen.push_back(change);
    Append(changes, std::move(change));
  }
  facts = std::move(now);
  return seen;
}

void HostRecord::Note(HostChange change) { Append(changes, std::move(change)); }

double HostRecord::LatestLevelChangeUnix() const {
  double latest = 0;
  for (const HostChange& change : changes) {
    if (change.field == kPlannedSeriesField || change.field == kMemoryErrorsField) continue;
    latest = std::max(latest, change.unix_seconds);
  }
  return latest;
}

}  // namespace numaprobe::daemon
