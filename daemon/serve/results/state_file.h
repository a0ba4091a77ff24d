// SPDX-License-Identifier: Apache-2.0
// The text of <state_directory>/state.json: everything the daemon has learnt
// that a restart must not lose. ParseState reads it from a string (what the
// daemon loads and tests/fuzz/fuzz_state.cc feeds it), FormatState writes
// it. No I/O here (results/state_storage.h does that).
//
// Format 2 (this release) keeps, per series, the recent figures the drift and
// peer figures are made of (and since 0.3, when each landed: "recent_unix",
// optional, so that an accept can take the level measured since a change),
// the baseline's figures while it records, and the
// armed baseline; the host record (facts, changes, origin); each kind's
// measurement settings; the scheduler's task-cost estimate and its place in
// the rotation; and the last operator request acted on. Format 1 (the release
// before) kept one complete baseline, or an operator's marker: it is read and
// converted, every value becoming an armed series.
//
// An operator's request (`numaprobe baseline accept`/`reset`) is a file of its
// own beside it (kRequestFile), so that the daemon saving its state never
// overwrites a request it has not read yet.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/probing/series_key.h"
#include "daemon/serve/results/host_record.h"
#include "daemon/serve/results/series_history.h"
#include "daemon/serve/task_cost_estimate.h"

namespace numaprobe::daemon {

inline constexpr const char* kStateFile = "state.json";
inline constexpr const char* kRequestFile = "baseline-request.json";

// Where the rotation was (rotation.h): a restart goes on with the next round
// of the cycle instead of starting it over, so that frequent restarts do not
// starve its last rounds.
struct RotationPosition {
  std::string tasks;  // RotationSignature of the task list it applies to ("" none)
  int round = 0;      // the last round of the cycle that ran
  int rounds = 1;     // of how many
};

// What the scheduler wants kept across restarts.
struct ScheduleMemory {
  TaskCostEstimate costs;
  RotationPosition position;
  // Per kind on a schedule of its own (serve/own_schedule.h), when its last
  // finished cycle began (Unix seconds): a restart waits out its interval
  // instead of loading every node again at each start.
  std::map<std::string, double, std::less<>> own_cycles;
};

struct StateContents {
  HostRecord host;
  // Per kind with a baseline, the measurement settings its figures were taken
  // with (ResultModel: the kind's SettingsFingerprint and the memory settings).
  std::map<std::string, std::string> settings;
  std::map<SeriesKey, SeriesHistory> series;
  ScheduleMemory schedule;
  std::string last_request;  // the id of the last operator request acted on
};

struct LoadedState {
  enum class Status { kMissing, kOk, kCorrupt, kUnreadable } status = Status::kMissing;
  std::string error;  // why it is corrupt or unreadable (names the path)
  int format = 0;
  std::optional<StateContents> contents;  // none for a format-1 marker file
  // Format 1 only: its one settings text for every kind (compared with
  // LegacyMeasurementSettings), and an operator's marker ("reset", "accept")
  // written in place of the baseline.
  std::string legacy_settings;
  std::string legacy_marker;
};

// Parses a state file's text; `path` only names the file in the error. Never
// throws: any defect gives kCorrupt with an error naming the key.
LoadedState ParseState(std::string_view text, const std::string& path);

// The file's text (format 2). Figures must be finite (JSON has none other):
// otherwise returns std::nullopt and sets `error` to the first offending value.
std::optional<std::string> FormatState(const StateContents& contents, std::string& error);

// An operator's request: "accept" or "reset", with an id that tells one
// request from the next (so a request file that cannot be removed is acted
// on once).
struct OperatorRequest {
  std::string action;
  std::string id;
};
std::optional<OperatorRequest> ParseRequest(std::string_view text, const std::string& path, std::string& error);
std::string FormatRequest(const OperatorRequest& request);

}  // namespace numaprobe::daemon
