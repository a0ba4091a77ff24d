// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the state-file parser (ParseState, what the daemon runs on the
// text of <state_directory>/state.json, either format). Properties checked
// beyond "no crash": a rejected file always says why and gives nothing; an
// accepted one formats (FormatState) without error, and the formatted text
// parses back to contents that format to the same text, so the daemon never
// loads a state it could not write again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "daemon/serve/results/state_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using numaprobe::daemon::LoadedState;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const LoadedState state = numaprobe::daemon::ParseState(text, "fuzz/state.json");
  if (state.status == LoadedState::Status::kMissing) std::abort();  // only a missing file is "missing"
  if (state.status == LoadedState::Status::kCorrupt) {
    if (state.error.empty() || state.contents || !state.legacy_marker.empty()) std::abort();
    return 0;
  }
  if (!state.contents) {
    // A format-1 marker, nothing else.
    if (state.format != 1 || (state.legacy_marker != "reset" && state.legacy_marker != "accept")) std::abort();
    return 0;
  }
  std::string error;
  const auto formatted = numaprobe::daemon::FormatState(*state.contents, error);
  if (!formatted) std::abort();  // accepted, yet the daemon could not save it again
  const LoadedState again = numaprobe::daemon::ParseState(*formatted, "again");
  if (again.status != LoadedState::Status::kOk || !again.contents || again.format != 2) std::abort();
  const auto reformatted = numaprobe::daemon::FormatState(*again.contents, error);
  if (!reformatted || *reformatted != *formatted) std::abort();
  return 0;
}
