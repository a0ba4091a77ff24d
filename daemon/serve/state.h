// The daemon's persistent state (the baseline, keyed by the host fingerprint)
// in <state_directory>/state.json, written atomically: temp file, fsync,
// rename, fsync of the directory. A missing file is normal; a corrupt or
// unreadable one is reported and replaced, never fatal.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "daemon/common/host_info.h"
#include "daemon/serve/baseline.h"
#include "daemon/serve/state_format.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Stable hash (hex) of what makes figures comparable across restarts: CPU
// model, microcode, kernel, node count and distance matrix, page-size policy.
std::string HostFingerprint(const HostInfo& host, const kernels::Topology& topology, kernels::PagePolicy pages);

// The host facts whose change keeps the baseline but is exported as a change
// (numaprobe_host_change_timestamp_seconds): kernel, microcode, firmware,
// numaprobe_version, cpu_model, page_size, hypervisor, nodes_per_package (the
// SNC/NPS mode, which also changes the topology). The runtime facts
// (runtime_facts.h) join them every round.
std::map<std::string, std::string> HostFacts(const HostInfo& host, kernels::PagePolicy pages,
                                             const std::string& numaprobe_version);

// What makes old pairs comparable at all: the node ids and the SLIT distance
// matrix ("nodes=0,1;distances=10,21,21,10"). A change (SNC/NPS mode, a node
// gone) starts a new baseline.
std::string TopologySignature(const kernels::Topology& topology);

LoadedState LoadState(const std::string& state_directory);
// Returns an error message naming the path, or "" on success.
std::string SaveState(const std::string& state_directory, const Baseline& baseline);
// Replaces the baseline by a marker (for `numaprobe baseline reset`, and
// `baseline accept` with marker "accept"); "" on success.
std::string ResetState(const std::string& state_directory, const std::string& marker = "reset");
// Removes the state file; "" on success or if there was none. The daemon
// does this once it has acted on a reset, so the marker is read only once.
std::string RemoveState(const std::string& state_directory);

}  // namespace numaprobe::daemon
