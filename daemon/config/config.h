// numaprobe's configuration: YAML text -> a checked Config value, or every
// error found, each naming the key and the line (config/numaprobe.yaml is the
// documented default). Defaults are safe on a busy production host.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/config/plan_options.h"
#include "kernels/bandwidth.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

// flock(2)ed around every probe by every numaprobe process on the host (see
// probing/probe_lock.h); the config key probe_lock_file and `probe --lock-file`.
inline constexpr const char* kDefaultProbeLockFile = "/run/lock/numaprobe.lock";

enum class ProbePriority { kIdle, kNice19 };  // SCHED_IDLE, or SCHED_BATCH + nice 19

struct Config {
  struct Latency {
    bool enabled = true;
    std::size_t stride_bytes = 128;
    std::size_t buffer_bytes = 0;  // 0: sized from the LLC of the measuring CPU
    int samples = 7;
    std::uint64_t loads_per_sample = 40'000;
    bool operator==(const Latency&) const = default;
  } latency;
  struct Bandwidth {
    bool enabled = true;
    std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                          kernels::BandwidthOp::kCopy};
    int threads = 1;
    std::size_t buffer_bytes = 256u << 20;
    std::size_t burst_bytes = 32u << 20;
    int bursts = 5;
    bool operator==(const Bandwidth&) const = default;
  } bandwidth;
  struct CoreToCore {
    bool enabled = true;
    int samples = 7;
    int round_trips = 2000;
    bool operator==(const CoreToCore&) const = default;
  } core_to_core;
  // Loaded latency (MLC --loaded_latency): on demand by default, since one
  // run of a pair costs about a second of CPU on every CPU of the node (see
  // config/numaprobe.yaml before enabling it in the daemon).
  struct LoadedLatency {
    bool enabled = false;
    std::vector<std::string> traffic{"read", "read2-ntwrite1"};  // kernels::LoadTrafficName
    int load_threads = 0;                                        // 0: every other allowed CPU of the chase CPU's node
    int samples = 5;
    std::uint64_t loads_per_sample = 10'000;
    bool operator==(const LoadedLatency&) const = default;
  } loaded_latency;
  PlanOptions targets;  // cpus, mem_nodes, per_cpu, c2c_cpus
  struct Schedule {
    double duty_cycle = 0.002;                    // share of one CPU spent in probes
    std::chrono::milliseconds interval{300'000};  // target time between round starts
    double jitter = 0.2;                          // interval * U(1 - jitter, 1 + jitter)
    ProbePriority priority = ProbePriority::kIdle;
    bool operator==(const Schedule&) const = default;
  } schedule;
  struct Memory {
    std::size_t budget_bytes = 320u << 20;  // probe buffers alive at once (one probe's)
    kernels::PagePolicy pages = kernels::PagePolicy::kAuto;
    bool operator==(const Memory&) const = default;
  } memory;
  struct Baseline {
    int rounds = 15;  // complete rounds whose medians form the baseline (docs/detection.md)
    bool operator==(const Baseline&) const = default;
  } baseline;
  std::string state_directory = "/var/lib/numaprobe";
  // flock(2)ed around every probe by every numaprobe process on the host (see
  // ProbeLock); "" disables the exclusion.
  std::string probe_lock_file = kDefaultProbeLockFile;
  bool operator==(const Config&) const = default;
};

struct ConfigError {
  std::string key;  // dotted path: "schedule.duty_cycle"
  int line = 0;     // 1-based; 0 when not tied to a line
  std::string message;
  std::string ToString() const;  // "line 12: schedule.duty_cycle: 1e-300 is out of range [0.00001, 0.5]"
};

// Either a Config or the list of everything wrong with the text.
using ConfigResult = std::variant<Config, std::vector<ConfigError>>;

ConfigResult ParseConfig(std::string_view yaml_text);
// Reads the file; an unreadable file is one error naming the path.
ConfigResult LoadConfigFile(const std::string& path);
// The text of a regular file of at most 1 MiB, or one error naming the path.
std::variant<std::string, std::vector<ConfigError>> ReadConfigText(const std::string& path);

}  // namespace numaprobe::daemon
