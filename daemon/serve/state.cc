#include "daemon/serve/state.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "daemon/common/stable_hash.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

constexpr std::string_view kStateFile = "state.json";

std::string StatePath(const std::string& dir) { return fmt::format("{}/{}", dir, kStateFile); }
std::string Errno(int error) { return std::strerror(error); }

// Closes on scope exit so that every early return in the write path releases
// the descriptor; Close() reports the error of an explicit close.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

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
// power loss) leaves ".state.json.tmp.<pid>" behind. Once a write has
// succeeded, temp files of processes that no longer exist are removed; a
// live writer's (a concurrent `numaprobe baseline accept`) is left alone.
void RemoveStaleTempFiles(const std::string& dir) {
  const std::string prefix = fmt::format(".{}.tmp.", kStateFile);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (end == name.c_str() + prefix.size() || *end != '\0' || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), error);
  }
}

// Temp file in the same directory (rename is only atomic within a file
// system), fsync, rename, then fsync the directory so the rename itself
// survives a power loss. A reader sees the old file or the new one, never half.
std::string WriteAtomically(const std::string& dir, const std::string& content) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot create state directory {}: {}", dir, Errno(errno));
  }
  const std::string final_path = StatePath(dir);
  const std::string temp_path = fmt::format("{}/.{}.tmp.{}", dir, kStateFile, ::getpid());
  ScopedFd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.ok()) return fmt::format("cannot create {}: {}", temp_path, Errno(errno));

  const auto fail = [&](std::string_view what) {
    const int error = errno;  // before unlink() can overwrite it
    ::unlink(temp_path.c_str());
    return fmt::format("cannot {} {}: {}", what, temp_path, Errno(error));
  };
  // `sudo numaprobe baseline reset` must not leave a root-owned 0600 file that
  // a daemon running as its own user can no longer read: the file belongs to
  // whoever owns the state directory.
  struct stat dir_stat {};
  if (::geteuid() == 0 && ::stat(dir.c_str(), &dir_stat) == 0 && dir_stat.st_uid != 0 &&
      ::fchown(fd.get(), dir_stat.st_uid, dir_stat.st_gid) != 0) {
    return fail("chown");
  }
  if (!WriteAll(fd.get(), content)) return fail("write");
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (fd.Close() != 0) return fail("close");
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    return fmt::format("cannot rename {} to {}: {}", temp_path, final_path, Errno(error));
  }

  ScopedFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.ok() || ::fsync(dir_fd.get()) != 0) {
    return fmt::format("cannot fsync state directory {}: {}", dir, Errno(errno));
  }
  RemoveStaleTempFiles(dir);
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

LoadedState LoadState(const std::string& state_directory) {
  const std::string path = StatePath(state_directory);
  std::string text;
  // The errno, not just a failure: ENOENT is a first start, anything else a problem.
  if (const int error = kernels::ReadWholeFile(path, text); error != 0) {
    LoadedState state;
    if (error == ENOENT) return state;  // first start: status stays kMissing
    state.status = LoadedState::Status::kCorrupt;
    state.error = fmt::format("cannot read {}: {}", path, Errno(error));
    return state;
  }
  return ParseState(text, path);
}

std::string SaveState(const std::string& state_directory, const Baseline& baseline) {
  std::string error;
  const std::optional<std::string> text = FormatState(baseline, error);
  if (!text) return fmt::format("cannot save {}: {}", StatePath(state_directory), error);
  return WriteAtomically(state_directory, *text);
}

std::string ResetState(const std::string& state_directory, const std::string& marker) {
  // No directory, no baseline: creating one here (as root, typically) could
  // leave the daemon a directory it cannot write to.
  struct stat dir_stat {};
  if (::stat(state_directory.c_str(), &dir_stat) != 0 && errno == ENOENT) return "";
  // Rewritten rather than deleted, so the daemon can tell "reset by an
  // operator" (a valid file without a baseline) from "first start" (no file).
  return WriteAtomically(state_directory, FormatMarker(marker));
}

std::string RemoveState(const std::string& state_directory) {
  const std::string path = StatePath(state_directory);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return fmt::format("cannot remove {}: {}", path, Errno(errno));
  return "";
}

}  // namespace numaprobe::daemon
