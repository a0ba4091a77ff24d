#include "daemon/serve/state.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "daemon/common/stable_hash.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

std::string PathOf(const std::string& dir, const std::string& name) { return fmt::format("{}/{}", dir, name); }
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
void RemoveStaleTempFiles(const std::string& dir, const std::string& name) {
  const std::string prefix = fmt::format(".{}.tmp.", name);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(file.c_str() + prefix.size(), &end, 10);
    if (end == file.c_str() + prefix.size() || *end != '\0' || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), error);
  }
}

// Temp file in the same directory (rename is only atomic within a file
// system), fsync, rename, then fsync the directory so the rename itself
// survives a power loss. A reader sees the old file or the new one, never half.
std::string WriteAtomically(const std::string& dir, const std::string& name, const std::string& content) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot create state directory {}: {}", dir, Errno(errno));
  }
  const std::string final_path = PathOf(dir, name);
  const std::string temp_path = fmt::format("{}/.{}.tmp.{}", dir, name, ::getpid());
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
  RemoveStaleTempFiles(dir, name);
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
  // The errno, not just a failure: ENOENT is a first start, anything else a problem.
  if (const int error = kernels::ReadWholeFile(path, stored.text); error != 0) {
    stored.text.clear();
    // No such file, or a path component that is no directory (so no file
    // either): a first start, and a later write says what is wrong.
    if (error == ENOENT || error == ENOTDIR) return stored;  // status stays kMissing
    stored.status = StoredText::Status::kUnreadable;
    stored.error = fmt::format("cannot read {}: {}", path, Errno(error));
    return stored;
  }
  stored.status = StoredText::Status::kOk;
  return stored;
}

std::string WriteStateFile(const std::string& state_directory, const std::string& name, const std::string& text) {
  return WriteAtomically(state_directory, name, text);
}

std::string RemoveStateFile(const std::string& state_directory, const std::string& name) {
  const std::string path = PathOf(state_directory, name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return fmt::format("cannot remove {}: {}", path, Errno(errno));
  return "";
}

std::string KeepCorruptCopy(const std::string& state_directory, const std::string& name, const std::string& utc_stamp) {
  const std::string path = PathOf(state_directory, name);
  const std::string prefix = name + ".corrupt-";
  const std::string copy = PathOf(state_directory, prefix + utc_stamp);
  if (::rename(path.c_str(), copy.c_str()) != 0 && errno != ENOENT) {
    return fmt::format("cannot keep {} as {}: {}", path, copy, Errno(errno));
  }
  // The newest three: a file corrupted again and again must not fill the disk.
  std::vector<std::string> copies;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(state_directory, error)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0) copies.push_back(file);
  }
  std::sort(copies.begin(), copies.end());
  for (std::size_t i = 0; i + 3 < copies.size(); ++i)
    std::filesystem::remove(PathOf(state_directory, copies[i]), error);
  return "";
}

}  // namespace numaprobe::daemon
