// SPDX-License-Identifier: Apache-2.0
// The daemon's persistent state: the files of <state_directory>
// (results/state_file.h says what they hold), written atomically: temp file,
// fsync, rename, fsync of the directory. A missing file is normal; an
// unreadable one is reported and left alone; a corrupt one is reported, kept
// as a copy and replaced; none is ever fatal. Also the host's identity as the
// state file records it (fingerprint, facts, topology signature).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "daemon/common/host_info.h"
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

// The files of the state directory, by name (results/state_file.h names
// them), opened relative to the directory's descriptor: nothing inside it is
// followed through a link, and new files are created O_EXCL under a random
// temp name (docs/security.md, "Files"). Reading gives the text (a regular
// file of at most 16 MiB); or missing (a first start: no file, or a path
// that cannot hold one); or refused (a FIFO, a directory, a link, too large:
// it cannot be a state file, so it is kept as a copy and replaced); or
// unreadable (EACCES, EIO), with an error naming the path and errno: never
// replaced, since a file this process merely cannot read may hold a baseline.
struct StoredText {
  enum class Status { kMissing, kOk, kRefused, kUnreadable } status = Status::kMissing;
  std::string text;
  std::string error;
};
StoredText ReadStateFile(const std::string& state_directory, const std::string& name);
// Atomically (temp file, fsync, rename, fsync of the directory); creates the
// directory (0700) if missing. "" on success, else an error naming the path.
std::string WriteStateFile(const std::string& state_directory, const std::string& name, const std::string& text);
// "" on success or if there was none.
std::string RemoveStateFile(const std::string& state_directory, const std::string& name);
// Renames `name` to `name`.corrupt-<UTC time>, keeping the newest three such
// copies: a corrupt file is kept for the operator before it is replaced.
// "" on success, else an error naming the path.
std::string KeepCorruptCopy(const std::string& state_directory, const std::string& name, const std::string& utc_stamp);

}  // namespace numaprobe::daemon
