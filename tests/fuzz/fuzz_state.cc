// libFuzzer: the state-file parser (ParseState, what LoadState runs on the
// text of <state_directory>/state.json). Properties checked beyond "no crash":
// a rejected file always says why; an accepted baseline formats (FormatState)
// without error, and the formatted text parses back to the same baseline, so
// the daemon never loads a state it could not write again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>

#include "daemon/serve/state_format.h"

namespace {

using numaprobe::daemon::Baseline;
using numaprobe::daemon::BaselineValue;
using numaprobe::daemon::HostChange;

bool Same(const BaselineValue& a, const BaselineValue& b) {
  return std::tie(a.probe, a.cpu, a.cpu_node, a.mem_node, a.op, a.value) ==
         std::tie(b.probe, b.cpu, b.cpu_node, b.mem_node, b.op, b.value);
}

template <typename T, typename Eq>
bool SameList(const T& a, const T& b, Eq eq) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!eq(a[i], b[i])) return false;
  }
  return true;
}

bool Same(const Baseline& a, const Baseline& b) {
  const auto same_change = [](const HostChange& x, const HostChange& y) {
    return std::tie(x.field, x.before, x.after, x.unix_seconds) == std::tie(y.field, y.before, y.after, y.unix_seconds);
  };
  const auto same_value = [](const BaselineValue& x, const BaselineValue& y) { return Same(x, y); };
  const auto errors = [](const Baseline& x) {
    return x.memory_errors ? std::make_tuple(true, x.memory_errors->corrected, x.memory_errors->uncorrected)
                           : std::make_tuple(false, 0ULL, 0ULL);
  };
  return errors(a) == errors(b) &&
         std::tie(a.fingerprint, a.topology, a.facts, a.settings, a.created, a.complete) ==
             std::tie(b.fingerprint, b.topology, b.facts, b.settings, b.created, b.complete) &&
         SameList(a.values, b.values, same_value) && SameList(a.spread, b.spread, same_value) &&
         SameList(a.changes, b.changes, same_change);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using numaprobe::daemon::LoadedState;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const LoadedState state = numaprobe::daemon::ParseState(text, "fuzz/state.json");
  if (state.status == LoadedState::Status::kMissing) std::abort();  // only a missing file is "missing"
  if (state.status == LoadedState::Status::kCorrupt) {
    if (state.error.empty() || state.baseline) std::abort();
    return 0;
  }
  if (!state.baseline) {
    if (state.marker != "reset" && state.marker != "accept") std::abort();
    const LoadedState again = numaprobe::daemon::ParseState(numaprobe::daemon::FormatMarker(state.marker), "again");
    if (again.status != LoadedState::Status::kOk || again.marker != state.marker || again.baseline) std::abort();
    return 0;
  }
  std::string error;
  const auto formatted = numaprobe::daemon::FormatState(*state.baseline, error);
  if (!formatted) std::abort();  // accepted, yet the daemon could not save it again
  const LoadedState again = numaprobe::daemon::ParseState(*formatted, "again");
  if (again.status != LoadedState::Status::kOk || !again.baseline || !Same(*again.baseline, *state.baseline)) {
    std::abort();
  }
  return 0;
}
