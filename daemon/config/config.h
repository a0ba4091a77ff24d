// SPDX-License-Identifier: Apache-2.0
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

#include "daemon/common/typed_values.h"
#include "daemon/config/kind_section.h"
#include "daemon/config/plan_options.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

// flock(2)ed around every probe by every numaprobe process on the host (see
// probing/probe_lock.h); the config key probe_lock_file and `probe --lock-file`.
inline constexpr const char* kDefaultProbeLockFile = "/run/lock/numaprobe.lock";

enum class ProbePriority { kIdle, kNice19 };  // SCHED_IDLE, or SCHED_BATCH + nice 19

// Where the baseline and host facts live unless state_directory says otherwise.
inline constexpr const char* kDefaultStateDirectory = "/var/lib/numaprobe";

struct Config {
  // Each probe kind's section probes.<kind>, as the kind's own type
  // (probing/kinds/kind_settings.h): probes.Of<T>(). Absent: its defaults.
  TypedValues probes;
  PlanOptions targets;  // cpus, mem_nodes, per_cpu, the kinds' own target options
  struct Schedule {
    double duty_cycle = 0.002;  // share of one CPU spent in probes
    // While a planned series records its baseline: 0 (auto) is
    // LearningDutyCycle's choice; never below duty_cycle.
    double learning_duty_cycle = 0;
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
    int rounds = 15;  // figures of a series whose median is its baseline (docs/detection.md)
    // Host changes an operator declared planned ("field=value", "field=*"):
    // when one is seen the current level becomes the baseline, as `numaprobe
    // baseline accept` would make it, on every host the configuration reaches.
    std::vector<std::string> accept_changes;
    bool operator==(const Baseline&) const = default;
  } baseline;
  std::string state_directory = kDefaultStateDirectory;
  // flock(2)ed around every probe by every numaprobe process on the host (see
  // ProbeLock); "" disables the exclusion.
  std::string probe_lock_file = kDefaultProbeLockFile;
  // Node Feature Discovery's features.d: where `serve` keeps the file of
  // measured features (serve/node_feature_export.h); "" = none.
  std::string node_feature_directory;
  bool operator==(const Config&) const = default;
};

struct ConfigError {
  std::string key;  // dotted path: "schedule.duty_cycle"
  int line = 0;     // 1-based; 0 when not tied to a line
  std::string message;
  std::string ToString() const;  // "line 12: schedule.duty_cycle: 1e-300 is out of range [0.00001, 0.5]"
};

// The learning budget: schedule.learning_duty_cycle, or when auto 90% of the
// smaller of 1% of one CPU and 0.01% of the host's `host_cpus`; never below
// schedule.duty_cycle.
double LearningDutyCycle(const Config& config, std::size_t host_cpus);

// Either a Config or the list of everything wrong with the text.
using ConfigResult = std::variant<Config, std::vector<ConfigError>>;

// `kinds`: the probe kinds' sections (probing/probe_table.h, ProbeTableSections()).
ConfigResult ParseConfig(std::string_view yaml_text, const KindSections& kinds);
// Reads the file; an unreadable file is one error naming the path.
ConfigResult LoadConfigFile(const std::string& path, const KindSections& kinds);
// The text of a regular file of at most 1 MiB, or one error naming the path.
std::variant<std::string, std::vector<ConfigError>> ReadConfigText(const std::string& path);

}  // namespace numaprobe::daemon
