// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/state.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

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

// The state directory itself, symbolic links followed: systemd's
// StateDirectory with DynamicUser is a link into /var/lib/private, and the
// directory's own path belongs to root. What is inside it belongs to the
// daemon's user and is opened relative to this descriptor, never followed:
// root's `numaprobe baseline reset` must not write through a link that user
// planted (docs/security.md, "Files").
UniqueFd OpenDirectory(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// The names in the directory `dir_fd` that start with `prefix`.
std::vector<std::string> NamesWithPrefix(int dir_fd, std::string_view prefix) {
  std::vector<std::string> names;
  const int listing_fd = ::dup(dir_fd);
  if (listing_fd < 0) return names;
  DIR* listing = ::fdopendir(listing_fd);
  if (listing == nullptr) {
    ::close(listing_fd);
    return names;
  }
  ::rewinddir(listing);
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name(entry->d_name);
    if (name.substr(0, prefix.size()) == prefix) names.emplace_back(name);
  }
  ::closedir(listing);
  return names;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// A writer killed between creating its temp file and the rename (SIGKILL,
// power loss) leaves ".<name>.tmp.<pid>.<random>" behind (or, from an older
// numaprobe, ".<name>.tmp.<pid>"). Once a write has succeeded, temp files of
// processes that no longer exist are removed; a live writer's (a concurrent
// `numaprobe baseline accept`) is left alone. unlinkat removes the name,
// whatever it is: nothing is followed.
void RemoveStaleTempFiles(int dir_fd, const std::string& name) {
  const std::string prefix = fmt::format(".{}.tmp.", name);
  for (const std::string& file : NamesWithPrefix(dir_fd, prefix)) {
    const std::string rest = file.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end == rest.c_str() || (*end != '\0' && *end != '.') || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::unlinkat(dir_fd, file.c_str(), 0);
  }
}

// Temp file in the same directory (rename is only atomic within a file
// system), fsync, rename, then fsync the directory so the rename itself
// survives a power loss. A reader sees the old file or the new one, never
// half. Everything inside the directory goes through its descriptor: the
// temp file is created by this call under a random name (O_EXCL, no link
// followed), so nothing the directory's owner planted is ever written,
// truncated or chowned, even when root writes (`numaprobe baseline reset`).
// renameat replaces whatever has the final name (a planted link is replaced,
// not followed).
std::string WriteAtomically(const std::string& dir, const std::string& name, const std::string& content) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot create state directory {}: {}", dir, Errno(errno));
  }
  UniqueFd dir_fd = OpenDirectory(dir);
  if (!dir_fd.ok()) return fmt::format("cannot open state directory {}: {}", dir, Errno(errno));

  const std::string prefix = fmt::format(".{}.tmp.{}.", name, ::getpid());
  NewFile temp = CreateNewFileAt(dir_fd.get(), prefix, 0600);
  if (!temp.fd.ok()) {
    return fmt::format("cannot create a temporary file {}/{}*: {}", dir, prefix, Errno(temp.error));
  }
  const std::string temp_path = PathOf(dir, temp.name);
  const auto fail = [&](std::string_view what) {
    const int error = errno;  // before unlinkat() can overwrite it
    ::unlinkat(dir_fd.get(), temp.name.c_str(), 0);
    return fmt::format("cannot {} {}: {}", what, temp_path, Errno(error));
  };
  // `sudo numaprobe baseline reset` must not leave a root-owned 0600 file that
  // a daemon running as its own user can no longer read: the file belongs to
  // whoever owns the state directory. Only the file this call created, by
  // its descriptor.
  struct stat dir_stat {};
  if (::geteuid() == 0 && ::fstat(dir_fd.get(), &dir_stat) == 0 && dir_stat.st_uid != 0 &&
      ::fchown(temp.fd.get(), dir_stat.st_uid, dir_stat.st_gid) != 0) {
    return fail("chown");
  }
  if (!WriteAll(temp.fd.get(), content)) return fail("write");
  if (::fsync(temp.fd.get()) != 0) return fail("fsync");
  if (temp.fd.Close() != 0) return fail("close");
  if (::renameat(dir_fd.get(), temp.name.c_str(), dir_fd.get(), name.c_str()) != 0) {
    return fail(fmt::format("rename to {}", PathOf(dir, name)));
  }
  if (::fsync(dir_fd.get()) != 0) return fmt::format("cannot fsync state directory {}: {}", dir, Errno(errno));
  RemoveStaleTempFiles(dir_fd.get(), name);
  return "";
}

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
  return WriteAtomically(state_directory, name, text);
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
