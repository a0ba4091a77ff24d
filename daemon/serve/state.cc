#include "daemon/serve/state.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace numaprobe::daemon {
namespace {

using nlohmann::json;

// Bump when the layout changes incompatibly; an unknown version is treated as
// corrupt (reported, then replaced), never guessed at.
constexpr int kFormatVersion = 1;
constexpr std::string_view kStateFile = "state.json";

std::string StatePath(const std::string& dir) { return fmt::format("{}/{}", dir, kStateFile); }
std::string Errno(int error) { return std::strerror(error); }

// FNV-1a, 64 bit: stable across compilers, libraries and restarts, unlike
// std::hash. Collision resistance against an adversary is not needed here.
std::uint64_t Fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

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

// Reads the whole file; the errno of the failing call otherwise.
int ReadFile(const std::string& path, std::string& out) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) return errno;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
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
  return "";
}

// Schema checks that name the offending key: nlohmann's own messages
// ("type must be string, but is number") do not say which field it was.
const json& Field(const json& object, const std::string& where, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) throw std::runtime_error(fmt::format("{}.{}: missing", where, key));
  return *it;
}

std::string StringField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_string()) throw std::runtime_error(fmt::format("{}.{}: expected a string", where, key));
  return v.get<std::string>();
}

int IntField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_number_integer()) throw std::runtime_error(fmt::format("{}.{}: expected an integer", where, key));
  return v.get<int>();
}

Baseline ParseBaseline(const json& j) {
  if (!j.is_object()) throw std::runtime_error("baseline: expected an object");
  Baseline baseline;
  baseline.fingerprint = StringField(j, "baseline", "fingerprint");
  // Absent in files written before the settings were recorded: such a
  // baseline matches no settings and is re-recorded.
  if (j.contains("settings")) baseline.settings = StringField(j, "baseline", "settings");
  baseline.created = StringField(j, "baseline", "created");
  const json& complete = Field(j, "baseline", "complete");
  if (!complete.is_boolean()) throw std::runtime_error("baseline.complete: expected true or false");
  baseline.complete = complete.get<bool>();
  const json& values = Field(j, "baseline", "values");
  if (!values.is_array()) throw std::runtime_error("baseline.values: expected an array");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = fmt::format("baseline.values[{}]", i);
    const json& item = values[i];
    if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
    BaselineValue v;
    v.probe = StringField(item, where, "probe");
    v.cpu = IntField(item, where, "cpu");
    v.cpu_node = IntField(item, where, "cpu_node");
    v.mem_node = IntField(item, where, "mem_node");
    v.op = StringField(item, where, "op");
    const json& value = Field(item, where, "value");
    if (!value.is_number()) throw std::runtime_error(where + ".value: expected a number");
    v.value = value.get<double>();
    if (item.contains("spread")) {
      const json& spread = item["spread"];
      if (!spread.is_number()) throw std::runtime_error(where + ".spread: expected a number");
      BaselineValue s = v;
      s.value = spread.get<double>();
      baseline.spread.push_back(std::move(s));
    }
    baseline.values.push_back(std::move(v));
  }
  // Spread for some values only would be inconsistent: keep all or none.
  if (!baseline.spread.empty() && baseline.spread.size() != baseline.values.size()) {
    throw std::runtime_error("baseline.values: spread present for some values only");
  }
  if (j.contains("topology")) baseline.topology = StringField(j, "baseline", "topology");
  if (j.contains("facts")) {
    const json& facts = j["facts"];
    if (!facts.is_object()) throw std::runtime_error("baseline.facts: expected an object");
    for (const auto& [key, value] : facts.items()) {
      if (!value.is_string()) throw std::runtime_error(fmt::format("baseline.facts.{}: expected a string", key));
      baseline.facts[key] = value.get<std::string>();
    }
  }
  if (j.contains("changes")) {
    const json& changes = j["changes"];
    if (!changes.is_array()) throw std::runtime_error("baseline.changes: expected an array");
    for (std::size_t i = 0; i < changes.size(); ++i) {
      const std::string where = fmt::format("baseline.changes[{}]", i);
      const json& item = changes[i];
      if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
      HostChange c;
      c.field = StringField(item, where, "field");
      c.before = StringField(item, where, "before");
      c.after = StringField(item, where, "after");
      const json& when = Field(item, where, "unix_seconds");
      if (!when.is_number()) throw std::runtime_error(where + ".unix_seconds: expected a number");
      c.unix_seconds = when.get<double>();
      baseline.changes.push_back(std::move(c));
    }
  }
  return baseline;
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
      fmt::format("cpu_model={};microcode={};kernel={};nodes={};distances={};pages={}", host.cpu_model,
                  host.microcode, host.kernel, ids.size(), distances, kernels::PagePolicyName(pages));
  return fmt::format("{:016x}", Fnv1a64(canonical));
}

std::map<std::string, std::string> HostFacts(const HostInfo& host, kernels::PagePolicy pages,
                                             const std::string& numaprobe_version) {
  return {{"kernel", host.kernel},
          {"microcode", host.microcode},
          {"firmware", host.firmware.empty() ? "unknown" : host.firmware},
          {"numaprobe_version", numaprobe_version},
          {"cpu_model", host.cpu_model},
          {"page_size", std::string(kernels::PagePolicyName(pages))}};
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
  LoadedState state;
  const std::string path = StatePath(state_directory);
  std::string text;
  if (const int error = ReadFile(path, text); error != 0) {
    if (error == ENOENT) return state;  // first start: status stays kMissing
    state.status = LoadedState::Status::kCorrupt;
    state.error = fmt::format("cannot read {}: {}", path, Errno(error));
    return state;
  }
  // Everything below reports through one catch: a state file is replaceable,
  // so no defect in it may take the daemon down.
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    const auto format = j.find("format");
    if (format == j.end()) throw std::runtime_error("format: missing");
    if (!format->is_number_integer() || format->get<std::int64_t>() != kFormatVersion) {
      throw std::runtime_error(fmt::format("format: unsupported {} (expected {})", format->dump(), kFormatVersion));
    }
    // An absent or null baseline is a valid file: `numaprobe baseline reset`.
    if (const auto it = j.find("baseline"); it != j.end() && !it->is_null()) state.baseline = ParseBaseline(*it);
    if (!state.baseline) {
      state.marker = "reset";
      if (const auto it = j.find("marker"); it != j.end()) {
        if (!it->is_string() || (*it != "reset" && *it != "accept")) {
          throw std::runtime_error("marker: expected \"reset\" or \"accept\"");
        }
        state.marker = it->get<std::string>();
      }
    }
    state.status = LoadedState::Status::kOk;
  } catch (const std::exception& e) {  // nlohmann::json::exception derives from std::exception
    state.status = LoadedState::Status::kCorrupt;
    state.baseline.reset();
    state.error = fmt::format("invalid state file {}: {}", path, e.what());
  }
  return state;
}

std::string SaveState(const std::string& state_directory, const Baseline& baseline) {
  json values = json::array();
  for (const BaselineValue& v : baseline.values) {
    // JSON has no NaN or infinity (nlohmann would write null), and a file we
    // would later reject as corrupt must not be written in the first place.
    if (!std::isfinite(v.value)) {
      return fmt::format("cannot save {}: the {} value for nodes {}->{} is not finite", StatePath(state_directory), v.probe,
                         v.cpu_node, v.mem_node);
    }
    values.push_back({{"probe", v.probe}, {"cpu", v.cpu}, {"cpu_node", v.cpu_node},
                      {"mem_node", v.mem_node}, {"op", v.op}, {"value", v.value}});
  }
  // spread is kept in the same order as values (BaselineRecorder sorts both).
  if (baseline.spread.size() == baseline.values.size()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isfinite(baseline.spread[i].value)) values[i]["spread"] = baseline.spread[i].value;
    }
  }
  json changes = json::array();
  for (const HostChange& c : baseline.changes) {
    changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}, {"unix_seconds", c.unix_seconds}});
  }
  const json state = {{"format", kFormatVersion},
                      {"baseline",
                       {{"fingerprint", baseline.fingerprint},
                        {"settings", baseline.settings},
                        {"created", baseline.created},
                        {"topology", baseline.topology},
                        {"facts", baseline.facts},
                        {"changes", std::move(changes)},
                        {"complete", baseline.complete},
                        {"values", std::move(values)}}}};
  return WriteAtomically(state_directory, state.dump(2) + "\n");
}

std::string ResetState(const std::string& state_directory, const std::string& marker) {
  // No directory, no baseline: creating one here (as root, typically) could
  // leave the daemon a directory it cannot write to.
  struct stat dir_stat {};
  if (::stat(state_directory.c_str(), &dir_stat) != 0 && errno == ENOENT) return "";
  // Rewritten rather than deleted, so the daemon can tell "reset by an
  // operator" (a valid file without a baseline) from "first start" (no file).
  const json state = {{"format", kFormatVersion}, {"marker", marker}};
  return WriteAtomically(state_directory, state.dump(2) + "\n");
}

std::string RemoveState(const std::string& state_directory) {
  const std::string path = StatePath(state_directory);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return fmt::format("cannot remove {}: {}", path, Errno(errno));
  return "";
}

}  // namespace numaprobe::daemon
