#include "daemon/serve/state.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "daemon/common/memory_return.h"
#include "daemon/common/safe_file.h"
#include "daemon/common/stable_hash.h"
#include "daemon/common/wall_clock.h"

namespace numaprobe::daemon {
namespace {

constexpr std::string_view kStateFile = "state.json";
// The temp files of WriteAtomically: this prefix, the writer's pid, a dot, random hex.
constexpr std::string_view kTempPrefix = ".state.json.tmp.";
// A baseline value is about 200 bytes and 8 JSON values: 16 MiB and a
// million values hold ten times the baseline of a 2048-CPU host probed per
// CPU. A million values parse into at most ~80 MB (every one an empty
// object), freed at once; the nesting of a real file is 4.
constexpr std::uint64_t kMaxStateBytes = 16 * 1024 * 1024;
constexpr std::size_t kMaxStateValues = 1'000'000;
constexpr std::size_t kMaxStateDepth = 32;

std::string StatePath(const std::string& dir) { return fmt::format("{}/{}", dir, kStateFile); }
std::string Errno(int error) { return std::strerror(error); }

// The state directory itself, symbolic links followed: systemd's
// StateDirectory with DynamicUser is a link into /var/lib/private, and the
// directory's own path belongs to root. What is inside it belongs to the
// daemon's user and is opened relative to this descriptor, never followed.
UniqueFd OpenDirectory(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// Counts nesting and values without building anything (nlohmann's SAX
// interface), stopping at the first limit: 5 MiB of '[' would otherwise
// become 5 million nested arrays, hundreds of MB, before any check ran.
class ShapeCheck {
 public:
  std::string problem;
  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(nlohmann::json::number_integer_t) { return Value(); }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return Value(); }
  bool number_float(nlohmann::json::number_float_t, const std::string&) { return Value(); }
  bool string(std::string&) { return Value(); }
  bool binary(nlohmann::json::binary_t&) { return Value(); }
  bool key(std::string&) { return true; }
  bool start_object(std::size_t) { return Enter(); }
  bool end_object() { return Leave(); }
  bool start_array(std::size_t) { return Enter(); }
  bool end_array() { return Leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // ParseState says what is wrong, naming the key
  }

 private:
  bool Value() {
    if (++values_ <= kMaxStateValues) return true;
    problem = fmt::format("more than {} JSON values, the limit for a state file", kMaxStateValues);
    return false;
  }
  bool Enter() {
    if (!Value()) return false;
    if (++depth_ <= kMaxStateDepth) return true;
    problem = fmt::format("arrays and objects nested deeper than the limit of {} levels", kMaxStateDepth);
    return false;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  std::size_t values_ = 0;
  std::size_t depth_ = 0;
};

// Why `text` is too large a structure to parse, or "".
std::string ShapeProblem(std::string_view text) {
  ShapeCheck check;
  nlohmann::json::sax_parse(text, &check, nlohmann::json::input_format_t::json, /*strict=*/true);
  return check.problem;
}

// What the file at `name` in `dir_fd` is: read (within kMaxStateBytes, never
// through a symbolic link or from anything but a regular file), missing,
// unusable (kCorrupt: replaced, after a copy is kept) or unreadable (kept:
// EACCES and the like say nothing about what it holds).
LoadedState LoadAt(int dir_fd, const std::string& path) {
  LoadedState state;
  FileText file = ReadLimitedFileAt(dir_fd, std::string(kStateFile), path, kMaxStateBytes);
  if (file.error == ENOENT) return state;  // first start: status stays kMissing
  if (file.st.st_ino != 0) {
    state.file_id = fmt::format("{}:{}:{}.{:09}:{}", file.st.st_dev, file.st.st_ino, file.st.st_mtim.tv_sec,
                                file.st.st_mtim.tv_nsec, file.st.st_size);
  }
  if (!file.ok()) {
    // A file refused for its type (FIFO, link, directory) or size is
    // unusable; a failed open or read of a regular file is not its content's fault.
    const bool refused = file.error == 0 || (file.error == ELOOP && S_ISLNK(file.st.st_mode));
    state.status = refused ? LoadedState::Status::kCorrupt : LoadedState::Status::kUnreadable;
    state.error = std::move(file.problem);
    return state;
  }
  if (std::string problem = ShapeProblem(file.text); !problem.empty()) {
    state.status = LoadedState::Status::kCorrupt;
    state.error = fmt::format("invalid state file {}: {}", path, problem);
    return state;
  }
  LoadedState parsed = ParseState(file.text, path);
  parsed.file_id = std::move(state.file_id);
  return parsed;
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
// power loss) leaves ".state.json.tmp.<pid>.<random>" behind (or, from an
// older numaprobe, ".state.json.tmp.<pid>"). Once a write has succeeded, temp
// files of processes that no longer exist are removed; a live writer's (a
// concurrent `numaprobe baseline accept`) is left alone. unlinkat removes
// the name, whatever it is: nothing is followed.
void RemoveStaleTempFiles(int dir_fd) {
  const int listing_fd = ::dup(dir_fd);
  if (listing_fd < 0) return;
  DIR* listing = ::fdopendir(listing_fd);
  if (listing == nullptr) {
    ::close(listing_fd);
    return;
  }
  ::rewinddir(listing);
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name(entry->d_name);
    if (name.substr(0, kTempPrefix.size()) != kTempPrefix) continue;
    const std::string rest(name.substr(kTempPrefix.size()));
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end == rest.c_str() || (*end != '\0' && *end != '.') || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.emplace_back(name);
  }
  ::closedir(listing);
  for (const std::string& name : stale) ::unlinkat(dir_fd, name.c_str(), 0);
}

// Before state.json is replaced: "" if it may be (missing, or a valid state
// file), otherwise keeps a copy of an unusable one (corrupt, a FIFO, a link,
// too large) as state.json.corrupt-<UTC time> (a hard link: the same bytes,
// none copied), or says why it must stay (it cannot be read: EACCES says
// nothing of what it holds; or no copy could be kept).
std::string GuardReplaced(int dir_fd, const std::string& dir) {
  const std::string path = StatePath(dir);
  const LoadedState existing = LoadAt(dir_fd, path);
  if (existing.status == LoadedState::Status::kMissing || existing.status == LoadedState::Status::kOk) return "";
  if (existing.status == LoadedState::Status::kUnreadable) {
    return fmt::format("not replacing {}: {} (what it holds is kept; fix its permissions or remove it)", path,
                       existing.error);
  }
  struct stat st {};
  if (::fstatat(dir_fd, std::string(kStateFile).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? "" : fmt::format("cannot stat {}: {}", path, Errno(errno));
  }
  if (S_ISDIR(st.st_mode)) return fmt::format("not replacing {}: it is a directory", path);
  if (S_ISREG(st.st_mode) && st.st_nlink > 1) return "";  // kept already, by an earlier attempt
  const std::string stamp = UtcNow("%Y%m%dT%H%M%SZ");
  for (int n = 1; n <= 99; ++n) {
    const std::string copy = fmt::format("{}.corrupt-{}{}", kStateFile, stamp, n == 1 ? "" : fmt::format("-{}", n));
    if (::linkat(dir_fd, std::string(kStateFile).c_str(), dir_fd, copy.c_str(), 0) == 0) {
      spdlog::warn("kept the unusable state file as {}/{} ({})", dir, copy, existing.error);
      return "";
    }
    if (errno != EEXIST) {
      return fmt::format("not replacing the unusable {}: cannot keep a copy as {}/{}: {}", path, dir, copy,
                         Errno(errno));
    }
  }
  return fmt::format("not replacing the unusable {}: no free name for a copy", path);
}

// Temp file in the same directory (rename is only atomic within a file
// system), fsync, rename, then fsync the directory so the rename itself
// survives a power loss. A reader sees the old file or the new one, never
// half. Everything inside the directory goes through its descriptor: the
// temp file is created by this call under a random name (O_EXCL, no link
// followed), so nothing the directory's owner planted is ever written,
// truncated or chowned, even when root writes (`numaprobe baseline reset`).
std::string WriteAtomically(const std::string& dir, const std::string& content) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot create state directory {}: {}", dir, Errno(errno));
  }
  UniqueFd dir_fd = OpenDirectory(dir);
  if (!dir_fd.ok()) return fmt::format("cannot open state directory {}: {}", dir, Errno(errno));
  if (std::string refused = GuardReplaced(dir_fd.get(), dir); !refused.empty()) return refused;

  const std::string prefix = fmt::format("{}{}.", kTempPrefix, ::getpid());
  NewFile temp = CreateNewFileAt(dir_fd.get(), prefix, 0600);
  if (!temp.fd.ok()) {
    return fmt::format("cannot create a temporary file {}/{}*: {}", dir, prefix, Errno(temp.error));
  }
  const std::string temp_path = fmt::format("{}/{}", dir, temp.name);
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
  if (::renameat(dir_fd.get(), temp.name.c_str(), dir_fd.get(), std::string(kStateFile).c_str()) != 0) {
    return fail(fmt::format("rename to {}", StatePath(dir)));
  }
  if (::fsync(dir_fd.get()) != 0) return fmt::format("cannot fsync state directory {}: {}", dir, Errno(errno));
  RemoveStaleTempFiles(dir_fd.get());
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
  UniqueFd dir_fd = OpenDirectory(state_directory);
  if (!dir_fd.ok()) {
    LoadedState state;
    if (errno == ENOENT) return state;  // no directory yet: a first start
    state.status = LoadedState::Status::kUnreadable;
    state.error = fmt::format("cannot open state directory {}: {}", state_directory, Errno(errno));
    return state;
  }
  LoadedState state = LoadAt(dir_fd.get(), path);
  // The parser's garbage (up to kMaxStateValues values) is freed by now;
  // hand it back rather than keep it for the rest of the run.
  ReturnFreedMemory();
  return state;
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
  UniqueFd dir_fd = OpenDirectory(state_directory);
  if (!dir_fd.ok()) {
    return errno == ENOENT ? "" : fmt::format("cannot remove {}: {}", path, Errno(errno));
  }
  if (::unlinkat(dir_fd.get(), std::string(kStateFile).c_str(), 0) != 0 && errno != ENOENT) {
    return fmt::format("cannot remove {}: {}", path, Errno(errno));
  }
  return "";
}

}  // namespace numaprobe::daemon
