// SPDX-License-Identifier: Apache-2.0
// What the baseline is read against: the host it was recorded on (fingerprint
// and topology signature), the host facts as last seen, every change of them
// since the baseline began (the last kMaxHostChanges, each logged and
// exported so an alert can name it), EDAC's error counters at the baseline's
// start, and why the current baseline exists (its origin).
//
// Kernel, microcode, firmware, CPU model and numaprobe upgrades and runtime
// settings keep the baseline: they are changes, the old level stays the
// reference. Only a topology change (node count, distances: SNC/NPS mode, a
// node gone) makes the old pairs incomparable (results/result_model.h).
//
// Thread safety: a value, owned by the ResultModel.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/common/runtime_facts.h"
#include "daemon/serve/snapshot.h"

namespace numaprobe::daemon {

// The host changes a baseline keeps: the most recent ones, oldest dropped
// first. It bounds the state file and numaprobe_host_change_timestamp_seconds
// (at most this many series per host, one per field at most).
inline constexpr std::size_t kMaxHostChanges = 16;

// The fields of the changes the record makes itself: the EDAC error state
// since the baseline (Observe), and a series joining the plan (Note, by the
// model). Neither is a change of the host's level (LatestLevelChangeUnix).
inline constexpr const char* kMemoryErrorsField = "memory_errors_since_baseline";
inline constexpr const char* kPlannedSeriesField = "planned_series";

// Why the current baseline exists (numaprobe_baseline_info{origin}).
inline constexpr const char* kOriginFirstStart = "first_start";
inline constexpr const char* kOriginRestored = "restored";
inline constexpr const char* kOriginAccepted = "accepted";
inline constexpr const char* kOriginReset = "reset";
inline constexpr const char* kOriginSettingsChanged = "settings_changed";
inline constexpr const char* kOriginTopologyChanged = "topology_changed";
inline constexpr const char* kOriginStateFileCorrupt = "state_file_corrupt";
inline constexpr const char* kOriginStateFileUnreadable = "state_file_unreadable";

// What the daemon sees of the host now: every fact by field (HostFacts and
// the runtime facts), and EDAC's error counters.
struct HostObservation {
  HostObservation(std::map<std::string, std::string> f = {},  // NOLINT: a bare fact map is an observation
                  std::optional<MemoryErrorCounts> errors = std::nullopt)
      : facts(std::move(f)), memory_errors(errors) {}
  std::map<std::string, std::string> facts;
  std::optional<MemoryErrorCounts> memory_errors;
};

struct HostRecord {
  std::string fingerprint;  // HostFingerprint when the baseline began
  // TopologySignature (node ids and distances): a baseline is only comparable
  // on the same one.
  std::string topology;
  std::map<std::string, std::string> facts;  // as last seen
  std::vector<HostChange> changes;           // since the baseline began, oldest first
  // EDAC's counters when the baseline began: errors since are counted from them.
  std::optional<MemoryErrorCounts> memory_errors;
  std::string origin;  // kOrigin*
  std::string since;   // RFC 3339 UTC: when the current baseline began recording

  // Starts over for a new baseline on `topology` with `origin`: changes and
  // counters begin anew from `host`.
  void Begin(const std::string& origin_now, const std::string& fingerprint_now, const std::string& topology_now,
             const HostObservation& host, const std::string& since_now);

  // Records every fact that differs from the last look as a change at
  // `unix_now` (logged; `reference` says what the change is read against),
  // adds "memory_errors_since_baseline", and takes the facts as they are now.
  // Returns the changes recorded by this call.
  std::vector<HostChange> Observe(const HostObservation& host, double unix_now, const char* reference);

  // Appends one change made by the daemon itself (a series added to the plan).
  void Note(HostChange change);

  // When the latest change of the host's own facts was first seen (a
  // rollout's kernel, microcode, firmware, a runtime setting); 0 when there
  // is none. What an accept takes the level since.
  double LatestLevelChangeUnix() const;

  // EDAC errors since the baseline, as last observed; none without EDAC.
  const std::optional<MemoryErrorCounts>& errors_since() const { return errors_since_; }

 private:
  std::optional<MemoryErrorCounts> errors_since_;
};

}  // namespace numaprobe::daemon
