// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/state.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "daemon/common/atomic_replace.h"
#include "daemon/common/safe_file.h"
#include "daemon/common/stable_hash.h"

namespace numaprobe::daemon {
namespace {

// A state file holds every series' history: about 1 KB each, so 16 MiB is
// ten times what a 2048-CPU host probed per CPU needs. Larger is refused
// before it is read (results/state_file.cc caps the JSON's values and depth).
constexpr std::uint64_t kMaxStateFileBytes = 16 * 1024 * 1024;

std::string PathOf(const std::string& dir, const std::string& name) { return fmt::format("{}/{}", dir, name); }
std::string Errno(int error) { return std::strerror(error); }

}  // namespace

std::string HostFingerprint(const HostInfo& host, const kernels::Topology& topology, kernels::PagePolicy pages) {
  // Every node of the host, not only those this process may use now: a
  // cpuset.mems change is not a different host and must not discard the
  // baseline (hwloc keeps disallowed nodes and their distances).
  std::set<int> ids(topology.disallowed_nodes().begin(), topology.disallowed_nodes().end());
  for (const auto& node : topology.nodes()) ids.insert(node.id);
  std::string distances;
  for (int from : ids) {
    for (int to : ids) {
      if (!distances.empty()) distances += ',';
      distances += std::to_string(topology.Distance(from, to));
    }
  }
  const std::string canonical =
      fmt::format("cpu_model={};microcode={};kernel={};nodes={};distances={};pages={}", host.cpu_model, host.microcode,
                  host.kernel, ids.size(), distances, kernels::PagePolicyName(pages));
  return fmt::format("{:016x}", Fnv1a64(canonical));
}

std::map<std::string, std::string> HostFacts(const HostInfo& host, kernels::PagePolicy pages,
                                             const std::string& numaprobe_version) {
  return {{"kernel", host.kernel},
          {"microcode", host.microcode},
          {"firmware", host.firmware.empty() ? "unknown" : host.firmware},
          {"numaprobe_version", numaprobe_version},
          {"cpu_model", host.cpu_model},
          {"page_size", std::string(kernels::PagePolicyName(pages))},
          {"hypervisor", host.hypervisor},
          {"nodes_per_package", host.nodes_per_package}};
}

std::string TopologySignature(const kernels::Topology& topology) {
  // Every node of the host, as in HostFingerprint: a cpuset change is not a
  // different topology.
  std::set<int> ids(topology.disallowed_nodes().begin(), topology.disallowed_nodes().end());
  for (const auto& node : topology.nodes()) ids.insert(node.id);
  std::string nodes;
  std::string distances;
  for (int from : ids) {
    if (!nodes.empty()) nodes += ',';
    nodes += std::to_string(from);
    for (int to : ids) {
      if (!distances.empty()) distances += ',';
      distances += std::to_string(topology.Distance(from, to));
    }
  }
  return fmt::format("nodes={};distances={}", nodes, distances);
}

StoredText ReadStateFile(const std::string& state_directory, const std::string& name) {
  const std::string path = PathOf(state_directory, name);
  StoredText stored;
  UniqueFd dir_fd = OpenDirectory(state_directory);
  if (!dir_fd.ok()) {
    // No directory, or a path component that is no directory: a first
    // start, and a later write says what is wrong.
    if (errno == ENOENT || errno == ENOTDIR) return stored;  // status stays kMissing
    stored.status = StoredText::Status::kUnreadable;
    stored.error = fmt::format("cannot open state directory {}: {}", state_directory, Errno(errno));
    return stored;
  }
  FileText file = ReadLimitedFileAt(dir_fd.get(), name, path, kMaxStateFileBytes);
  if (file.ok()) {
    stored.status = StoredText::Status::kOk;
    stored.text = std::move(file.text);
  } else if (file.error == ENOENT) {
    return stored;  // a first start
  } else if (file.error == 0 || (file.error == ELOOP && S_ISLNK(file.st.st_mode))) {
    // Refused for what it is (a FIFO, a directory, a link, too large): it
    // cannot hold a state file, so it is replaced once a copy is kept.
    stored.status = StoredText::Status::kRefused;
    stored.error = std::move(file.problem);
  } else {
    // EACCES, EIO: says nothing about what it holds, so it is never replaced.
    stored.status = StoredText::Status::kUnreadable;
    stored.error = std::move(file.problem);
  }
  return stored;
}

std::string WriteStateFile(const std::string& state_directory, const std::string& name, const std::string& text) {
  return ReplaceFileAtomically(state_directory, name, text,
                               {.mode = 0600, .create_directory = true, .what = "state directory"});
}

std::string RemoveStateFile(const std::string& state_directory, const std::string& name) {
  const std::string path = PathOf(state_directory, name);
  UniqueFd dir_fd = OpenDirectory(state_directory);
  if (!dir_fd.ok()) return errno == ENOENT ? "" : fmt::format("cannot remove {}: {}", path, Errno(errno));
  if (::unlinkat(dir_fd.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    return fmt::format("cannot remove {}: {}", path, Errno(errno));
  }
  return "";
}

std::string KeepCorruptCopy(const std::string& state_directory, const std::string& name, const std::string& utc_stamp) {
  const std::string path = PathOf(state_directory, name);
  const std::string prefix = name + ".corrupt-";
  const std::string copy = prefix + utc_stamp;
  UniqueFd dir_fd = OpenDirectory(state_directory);
  if (!dir_fd.ok()) return errno == ENOENT ? "" : fmt::format("cannot keep {}: {}", path, Errno(errno));
  // renameat moves the name, whatever it is (a link stays a link, unfollowed).
  if (::renameat(dir_fd.get(), name.c_str(), dir_fd.get(), copy.c_str()) != 0 && errno != ENOENT) {
    return fmt::format("cannot keep {} as {}: {}", path, PathOf(state_directory, copy), Errno(errno));
  }
  // The newest three: a file corrupted again and again must not fill the disk.
  std::vector<std::string> copies = NamesWithPrefix(dir_fd.get(), prefix);
  std::sort(copies.begin(), copies.end());
  for (std::size_t i = 0; i + 3 < copies.size(); ++i) ::unlinkat(dir_fd.get(), copies[i].c_str(), 0);
  return "";
}

}  // namespace numaprobe::daemon
