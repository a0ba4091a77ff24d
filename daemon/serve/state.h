// The daemon's persistent state (the baseline, keyed by the host fingerprint)
// in <state_directory>/state.json, written atomically: temp file, fsync,
// rename, fsync of the directory. A missing file is normal; a corrupt or
// unreadable one is reported and replaced, never fatal.
#pragma once

#include <optional>
#include <string>

#include "daemon/serve/baseline.h"
#include "daemon/common/host_info.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Stable hash (hex) of what makes figures comparable across restarts: CPU
// model, microcode, kernel, node count and distance matrix, page-size policy.
std::string HostFingerprint(const HostInfo& host, const kernels::Topology& topology,
                            kernels::PagePolicy pages);

struct LoadedState {
  enum class Status { kOk, kMissing, kCorrupt } status = Status::kMissing;
  std::string error;  // why it is corrupt/unreadable (names the path)
  std::optional<Baseline> baseline;
};

LoadedState LoadState(const std::string& state_directory);
// Returns an error message naming the path, or "" on success.
std::string SaveState(const std::string& state_directory, const Baseline& baseline);
// Removes the baseline (for `numaprobe baseline reset`); "" on success.
std::string ResetState(const std::string& state_directory);
// Removes the state file; "" on success or if there was none. The daemon
// does this once it has acted on a reset, so the marker is read only once.
std::string RemoveState(const std::string& state_directory);

}  // namespace numaprobe::daemon
