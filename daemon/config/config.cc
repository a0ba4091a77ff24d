#include "daemon/config/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstring>

#include <yaml-cpp/yaml.h>

#include "daemon/config/config_reader.h"
#include "daemon/config/config_values.h"
#include "kernels/loaded_latency.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * kKiB;
constexpr std::uint64_t kTiB = kMiB * kMiB;
// No probe buffer or budget needs more; a larger value is a typo.
constexpr std::uint64_t kMaxBytes = 64 * kTiB;
// The documented config is a few KiB; anything past this is not a config file.
constexpr std::uint64_t kMaxConfigBytes = kMiB;

// Enum values are spelled by their kernels names (BandwidthOpName, ...), the
// same names `numaprobe probe` flags accept; index order matches the arrays.
template <class E, std::size_t N>
std::vector<std::string_view> NamesOf(const E (&values)[N], std::string_view (*name)(E)) {
  std::vector<std::string_view> names;
  for (E value : values) names.push_back(name(value));
  return names;
}
const std::vector<std::string_view> kOpNames = NamesOf(k::kAllBandwidthOps, k::BandwidthOpName);
const auto& kOps = k::kAllBandwidthOps;
const std::vector<std::string_view> kPriorityNames = {"idle", "nice19"};
constexpr ProbePriority kPriorities[] = {ProbePriority::kIdle, ProbePriority::kNice19};
const std::vector<std::string_view> kPageNames = NamesOf(k::kAllPagePolicies, k::PagePolicyName);
const auto& kPages = k::kAllPagePolicies;

void ReadLatency(ConfigSection& probes, Config::Latency& latency) {
  ConfigSection s =
      probes.Section("latency", {"enabled", "stride_bytes", "buffer_size", "samples", "loads_per_sample"});
  s.Bool("enabled", latency.enabled);
  // Below 64 two elements share a cache line; above 4096 every load is also a
  // TLB miss and the figure stops being the memory's latency.
  std::size_t stride = latency.stride_bytes;
  s.Integer("stride_bytes", 64, 4096, stride);
  if (!std::has_single_bit(stride)) {
    s.Error("stride_bytes", std::to_string(stride) + " is not a power of two (64, 128, ... 4096)");
  } else {
    latency.stride_bytes = stride;
  }
  // 0 (sized from the LLC) or at least 1 MiB: "buffer_size: 64" meant MiB,
  // and a chase that fits in cache measures the cache, not the node.
  std::size_t bytes = latency.buffer_bytes;
  s.Size("buffer_size", 0, kMaxBytes, bytes);
  if (bytes != 0 && bytes < kMiB) {
    s.Error("buffer_size", FormatSize(bytes) + " is out of range: 0 (automatic) or at least 1MiB");
  } else {
    latency.buffer_bytes = bytes;
  }
  s.Integer("samples", 1, 100, latency.samples);
  s.Integer("loads_per_sample", 1000, 100'000'000, latency.loads_per_sample);
}

void ReadBandwidth(ConfigSection& probes, ConfigErrors& errors, Config::Bandwidth& bandwidth) {
  ConfigSection s = probes.Section("bandwidth", {"enabled", "ops", "threads", "buffer_size", "burst_size", "bursts"});
  s.Bool("enabled", bandwidth.enabled);
  if (auto ops = s.ChoiceList("ops", kOpNames)) {
    bandwidth.ops.clear();
    for (std::size_t i : *ops) bandwidth.ops.push_back(kOps[i]);
  }
  s.Integer("threads", 1, 256, bandwidth.threads);
  s.Size("buffer_size", 0, kMaxBytes, bandwidth.buffer_bytes);
  std::size_t burst = bandwidth.burst_bytes;
  s.Size("burst_size", 64 * kKiB, kMaxBytes, burst);
  // Non-temporal stores and vector loads move whole lines.
  if (burst % 64 != 0) {
    s.Error("burst_size", FormatSize(burst) + " is not a multiple of 64 bytes");
  } else {
    bandwidth.burst_bytes = burst;
  }
  s.Integer("bursts", 1, 100, bandwidth.bursts);

  // The kernel's rotation rule (k::MinBandwidthBufferBytes), checked up front
  // so the operator sees the key. Checked only when its inputs parsed, to
  // avoid a second, confusing error.
  const std::string path = s.path() + ".";
  for (const char* key : {"threads", "buffer_size", "burst_size"}) {
    if (errors.Has(path + key)) return;
  }
  const std::uint64_t minimum =
      k::MinBandwidthBufferBytes(bandwidth.burst_bytes, static_cast<std::size_t>(bandwidth.threads));
  if (bandwidth.buffer_bytes < minimum) {
    // Blame the key the operator wrote: with only "threads: 8" set, that line.
    const char* key = "buffer_size";
    for (const char* written : {"buffer_size", "burst_size", "threads"}) {
      if (s.Has(written)) {
        key = written;
        break;
      }
    }
    s.Error(key, "buffer_size " + FormatSize(bandwidth.buffer_bytes) + " must be at least 4 x burst_size x threads = " +
                     FormatSize(minimum) + ", so consecutive bursts touch different memory");
  }
}

void ReadCoreToCore(ConfigSection& probes, Config::CoreToCore& c2c) {
  ConfigSection s = probes.Section("core_to_core", {"enabled", "samples", "round_trips"});
  s.Bool("enabled", c2c.enabled);
  s.Integer("samples", 1, 100, c2c.samples);
  s.Integer("round_trips", 10, 1'000'000, c2c.round_trips);
}

void ReadLoadedLatency(ConfigSection& probes, Config::LoadedLatency& loaded) {
  ConfigSection s =
      probes.Section("loaded_latency", {"enabled", "traffic", "load_threads", "samples", "loads_per_sample"});
  s.Bool("enabled", loaded.enabled);
  static const std::vector<std::string_view> kTraffic{k::LoadTrafficName(k::LoadTraffic::kRead),
                                                      k::LoadTrafficName(k::LoadTraffic::kReadNtWrite2To1)};
  if (auto traffic = s.ChoiceList("traffic", kTraffic)) {
    loaded.traffic.clear();
    for (std::size_t i : *traffic) loaded.traffic.emplace_back(kTraffic[i]);
  }
  s.Integer("load_threads", 0, 1024, loaded.load_threads);
  s.Integer("samples", 1, 100, loaded.samples);
  s.Integer("loads_per_sample", 1000, 100'000'000, loaded.loads_per_sample);
}

void ReadTargets(ConfigSection s, PlanOptions& targets) {
  s.IdList("cpus", targets.cpus);
  s.IdList("mem_nodes", targets.mem_nodes);
  s.Bool("per_cpu", targets.per_cpu);
  // The core-to-core kind's own target option (PlanOptions::kind_cpus).
  std::vector<int> pair_cpus = targets.KindCpus("c2c_cpus");
  s.IdList("c2c_cpus", pair_cpus);
  if (pair_cpus.size() == 1) {
    s.Error("c2c_cpus", "needs at least two CPUs (pairs of them are measured), or none for automatic");
  }
  targets.SetKindCpus("c2c_cpus", std::move(pair_cpus));
}

void ReadSchedule(ConfigSection s, Config::Schedule& schedule) {
  // At least 0.001% of one CPU: below that a probe's pause (cost / ratio)
  // runs into days and the figures are never refreshed; a value like 1e-300
  // is a typo, not a budget.
  s.Number("duty_cycle", {0.00001, 0.5}, schedule.duty_cycle);
  s.Duration("interval", seconds(1), hours(24), schedule.interval);
  s.Number("jitter", {0.0, 0.9}, schedule.jitter);
  if (auto i = s.Choice("priority", kPriorityNames)) schedule.priority = kPriorities[*i];
}

void ReadMemory(ConfigSection s, Config::Memory& memory) {
  s.Size("budget", 16 * kMiB, kMaxBytes, memory.budget_bytes);
  if (auto i = s.Choice("pages", kPageNames)) memory.pages = kPages[*i];
}

// Rules spanning sections, checked once every key has been read.
void CheckWhole(const Config& config, ConfigErrors& errors) {
  if (!config.latency.enabled && !config.bandwidth.enabled && !config.core_to_core.enabled &&
      !config.loaded_latency.enabled) {
    errors.Add("probes", errors.LineOf("probes"), "every probe is disabled; enable at least one");
  }
  // One buffer larger than the whole budget could never be prepared.
  const struct {
    const char* key;
    std::size_t bytes;
  } buffers[] = {{"probes.latency.buffer_size", config.latency.buffer_bytes},
                 {"probes.bandwidth.buffer_size", config.bandwidth.buffer_bytes}};
  for (const auto& buffer : buffers) {
    if (buffer.bytes <= config.memory.budget_bytes || errors.Has(buffer.key) || errors.Has("memory.budget")) continue;
    const int line = errors.LineOf(buffer.key) != 0 ? errors.LineOf(buffer.key) : errors.LineOf("memory.budget");
    errors.Add(buffer.key, line,
               FormatSize(buffer.bytes) + " is larger than memory.budget (" + FormatSize(config.memory.budget_bytes) +
                   ")");
  }
}

}  // namespace

std::string ConfigError::ToString() const {
  std::string out;
  if (line > 0) out += "line " + std::to_string(line) + ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

ConfigResult ParseConfig(std::string_view yaml_text) {
  ConfigErrors errors;
  Config config;
  try {
    const std::optional<YAML::Node> document = LoadOneDocument(yaml_text, errors);
    if (!document) return std::move(errors).Take();
    // An empty file (or only comments) is a valid config: every default.
    const YAML::Node root = *document;
    ConfigSection top(errors, root, "", 0,
                      {"probes", "targets", "schedule", "memory", "baseline", "state_directory", "probe_lock_file"});
    ConfigSection probes = top.Section("probes", {"latency", "bandwidth", "core_to_core", "loaded_latency"});
    ReadLatency(probes, config.latency);
    ReadBandwidth(probes, errors, config.bandwidth);
    ReadCoreToCore(probes, config.core_to_core);
    ReadLoadedLatency(probes, config.loaded_latency);
    ReadTargets(top.Section("targets", {"cpus", "mem_nodes", "per_cpu", "c2c_cpus"}), config.targets);
    ReadSchedule(top.Section("schedule", {"duty_cycle", "interval", "jitter", "priority"}), config.schedule);
    ReadMemory(top.Section("memory", {"budget", "pages"}), config.memory);
    top.Section("baseline", {"rounds"}).Integer("rounds", 1, 100, config.baseline.rounds);
    top.String("state_directory", config.state_directory);
    // Relative to what? The daemon's working directory is systemd's choice.
    if (config.state_directory.empty() || config.state_directory.front() != '/') {
      top.Error("state_directory", "'" + config.state_directory + "' is not an absolute path");
    }
    top.String("probe_lock_file", config.probe_lock_file);
    if (!config.probe_lock_file.empty() && config.probe_lock_file.front() != '/') {
      top.Error("probe_lock_file", "'" + config.probe_lock_file + "' is not an absolute path (or \"\" to disable)");
    }
    CheckWhole(config, errors);
  } catch (const YAML::Exception& e) {
    // Syntax errors; the mark locates them (0-based, like every yaml-cpp mark).
    errors.Add("", e.mark.is_null() ? 0 : e.mark.line + 1, "invalid YAML: " + e.msg);
  }
  if (errors.empty()) return config;
  return std::move(errors).TakeInFileOrder();
}

std::variant<std::string, std::vector<ConfigError>> ReadConfigText(const std::string& path) {
  // open/read rather than ifstream: ifstream "reads" a directory as an empty
  // file (a valid config!) and loses errno. Only a regular file of a sane
  // size is read: /dev/zero would grow the text until bad_alloc, and a FIFO
  // (opened without O_NONBLOCK) would block check-config, or the daemon's
  // SIGHUP reload, until a writer showed up.
  const auto fail = [&path](const std::string& why) {
    return std::vector<ConfigError>{{"", 0, "cannot read " + path + ": " + why}};
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("it is not a regular file");
  }
  // The read loop also stops once past the limit: the file may grow after fstat.
  const auto too_large = [&] { return fail("it is larger than " + FormatSize(kMaxConfigBytes)); };
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes) {
    ::close(fd);
    return too_large();
  }
  std::string text;
  char chunk[16384];
  while (text.size() <= kMaxConfigBytes) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return fail(std::strerror(error));
    }
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (text.size() > kMaxConfigBytes) return too_large();
  return text;
}

ConfigResult LoadConfigFile(const std::string& path) {
  auto text = ReadConfigText(path);
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&text)) return std::move(*errors);
  return ParseConfig(std::get<std::string>(text));
}

}  // namespace numaprobe::daemon
