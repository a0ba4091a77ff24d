// The text of <state_directory>/state.json, apart from the file: ParseState
// reads it from a string (what LoadState and tests/fuzz/fuzz_state.cc feed
// it), FormatState and FormatMarker write it. No I/O here; state.cc does that.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "daemon/serve/baseline.h"

namespace numaprobe::daemon {

struct LoadedState {
  // kUnreadable: the file exists but could not be read (EACCES, EIO): not
  // corrupt, and never replaced (state.h).
  enum class Status { kOk, kMissing, kCorrupt, kUnreadable } status = Status::kMissing;
  std::string error;  // why it is corrupt/unreadable (names the path)
  // The file's device, inode, mtime and size as LoadState found it ("" for
  // none): tells a marker already acted on from a new one.
  std::string file_id;
  std::optional<Baseline> baseline;
  // A valid file without a baseline is an operator's marker: "accept"
  // (numaprobe baseline accept) or "reset" (numaprobe baseline reset).
  std::string marker;
};

// Parses a state file's text; `path` only names the file in the error. Never
// throws: any defect gives kCorrupt with an error naming the key.
LoadedState ParseState(std::string_view text, const std::string& path);

// The file's text for `baseline`. Values must be finite (JSON has none other):
// otherwise returns std::nullopt and sets `error` to the first offending value.
std::optional<std::string> FormatState(const Baseline& baseline, std::string& error);
// A file without a baseline that carries an operator's marker (reset, accept).
std::string FormatMarker(const std::string& marker);

}  // namespace numaprobe::daemon
