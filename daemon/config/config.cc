// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config.h"

#include <algorithm>
#include <climits>

#include <yaml-cpp/yaml.h>

#include "daemon/common/safe_file.h"
#include "daemon/config/config_reader.h"
#include "daemon/config/config_values.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kMiB = 1024 * 1024;
// The documented config is a few KiB; anything past this is not a config file.
constexpr std::uint64_t kMaxConfigBytes = kMiB;

// Enum values are spelled by their kernels names (PagePolicyName, ...), the
// same names `numaprobe probe` flags accept; index order matches the arrays.
template <class E, std::size_t N>
std::vector<std::string_view> NamesOf(const E (&values)[N], std::string_view (*name)(E)) {
  std::vector<std::string_view> names;
  for (E value : values) names.push_back(name(value));
  return names;
}
const std::vector<std::string_view> kPriorityNames = {"idle", "nice19"};
constexpr ProbePriority kPriorities[] = {ProbePriority::kIdle, ProbePriority::kNice19};
const std::vector<std::string_view> kPageNames = NamesOf(k::kAllPagePolicies, k::PagePolicyName);
const auto& kPages = k::kAllPagePolicies;

void ReadTargets(ConfigSection s, const KindSections& kinds, PlanOptions& targets) {
  s.IdList("cpus", targets.cpus);
  s.IdList("mem_nodes", targets.mem_nodes);
  s.Bool("per_cpu", targets.per_cpu);
  for (const KindSection* kind : kinds) kind->ReadTargets(s, targets);
}

void ReadSchedule(ConfigSection s, Config::Schedule& schedule) {
  // At least 0.001% of one CPU: below that a probe's pause (cost / ratio)
  // runs into days and the figures are never refreshed; a value like 1e-300
  // is a typo, not a budget.
  s.Number("duty_cycle", {0.00001, 0.5}, schedule.duty_cycle);
  s.NumberOrAuto("learning_duty_cycle", {0.00001, 0.5}, schedule.learning_duty_cycle);
  s.Duration("interval", seconds(1), hours(24), schedule.interval);
  s.Number("jitter", {0.0, 0.9}, schedule.jitter);
  if (auto i = s.Choice("priority", kPriorityNames)) schedule.priority = kPriorities[*i];
}

void ReadBaseline(ConfigSection s, Config::Baseline& baseline) {
  s.Integer("rounds", 1, 100, baseline.rounds);
  s.StringList("accept_changes", baseline.accept_changes);
  for (const std::string& rule : baseline.accept_changes) {
    const auto eq = rule.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == rule.size()) {
      s.Error("accept_changes",
              "\"" + rule + "\": expected field=value (kernel=6.6.13-amd64) or field=* (any new value)");
      return;
    }
  }
}

void ReadMemory(ConfigSection s, Config::Memory& memory) {
  s.Size("budget", 16 * kMiB, kMaxConfigSizeBytes, memory.budget_bytes);
  if (auto i = s.Choice("pages", kPageNames)) memory.pages = kPages[*i];
}

// Rules spanning sections, checked once every key has been read.
void CheckWhole(const Config& config, const KindSections& kinds, ConfigErrors& errors) {
  if (std::none_of(kinds.begin(), kinds.end(), [&](const KindSection* kind) { return kind->Enabled(config); })) {
    errors.Add("probes", errors.LineOf("probes"), "every probe is disabled; enable at least one");
  }
  // One buffer larger than the whole budget could never be prepared.
  for (const KindSection* kind : kinds) {
    for (const ConfiguredBuffer& buffer : kind->ConfiguredBuffers(config)) {
      const std::string key = "probes." + std::string(kind->name()) + "." + buffer.key;
      if (buffer.bytes <= config.memory.budget_bytes || errors.Has(key) || errors.Has("memory.budget")) continue;
      const int line = errors.LineOf(key) != 0 ? errors.LineOf(key) : errors.LineOf("memory.budget");
      errors.Add(key, line,
                 FormatSize(buffer.bytes) + " is larger than memory.budget (" + FormatSize(config.memory.budget_bytes) +
                     ")");
    }
  }
}

}  // namespace

double LearningDutyCycle(const Config& config, std::size_t host_cpus) {
  // Auto: 90% of the cap (1% of one CPU, 0.01% of the host's CPUs), so that
  // the budget's one-visit overshoot and the daemon's own work (scrapes,
  // snapshots) stay under it.
  const double chosen = config.schedule.learning_duty_cycle > 0
                            ? config.schedule.learning_duty_cycle
                            : 0.9 * std::min(0.01, 0.0001 * static_cast<double>(host_cpus));
  return std::max(chosen, config.schedule.duty_cycle);
}

std::string ConfigError::ToString() const {
  std::string out;
  if (line > 0) out += "line " + std::to_string(line) + ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

ConfigResult ParseConfig(std::string_view yaml_text, const KindSections& kinds) {
  ConfigErrors errors;
  Config config;
  try {
    const std::optional<YAML::Node> document = LoadOneDocument(yaml_text, errors);
    if (!document) return std::move(errors).Take();
    // An empty file (or only comments) is a valid config: every default.
    const YAML::Node root = *document;
    ConfigSection top(errors, root, "", 0,
                      {"probes", "targets", "schedule", "memory", "baseline", "state_directory", "probe_lock_file",
                       "node_feature_directory"});
    std::vector<std::string_view> kind_names;
    std::vector<std::string_view> target_keys{"cpus", "mem_nodes", "per_cpu"};
    for (const KindSection* kind : kinds) {
      kind_names.push_back(kind->name());
      for (std::string_view key : kind->TargetKeys()) target_keys.push_back(key);
    }
    ConfigSection probes = top.Section("probes", kind_names);
    for (const KindSection* kind : kinds) {
      ConfigSection section = probes.Section(kind->name(), kind->ConfigKeys());
      kind->ReadConfig(section, config.probes);
    }
    ReadTargets(top.Section("targets", target_keys), kinds, config.targets);
    ReadSchedule(top.Section("schedule", {"duty_cycle", "learning_duty_cycle", "interval", "jitter", "priority"}),
                 config.schedule);
    ReadMemory(top.Section("memory", {"budget", "pages"}), config.memory);
    ReadBaseline(top.Section("baseline", {"rounds", "accept_changes"}), config.baseline);
    top.String("state_directory", config.state_directory);
    // Relative to what? The daemon's working directory is systemd's choice.
    if (config.state_directory.empty() || config.state_directory.front() != '/') {
      top.Error("state_directory", "'" + config.state_directory + "' is not an absolute path");
    }
    top.String("probe_lock_file", config.probe_lock_file);
    if (!config.probe_lock_file.empty() && config.probe_lock_file.front() != '/') {
      top.Error("probe_lock_file", "'" + config.probe_lock_file + "' is not an absolute path (or \"\" to disable)");
    }
    top.String("node_feature_directory", config.node_feature_directory);
    if (!config.node_feature_directory.empty() && config.node_feature_directory.front() != '/') {
      top.Error("node_feature_directory",
                "'" + config.node_feature_directory + "' is not an absolute path (or \"\" for no feature file)");
    }
    CheckWhole(config, kinds, errors);
  } catch (const YAML::Exception& e) {
    // Syntax errors; the mark locates them (0-based, like every yaml-cpp mark).
    errors.Add("", e.mark.is_null() ? 0 : e.mark.line + 1, "invalid YAML: " + e.msg);
  }
  if (errors.empty()) return config;
  return std::move(errors).TakeInFileOrder();
}

std::variant<std::string, std::vector<ConfigError>> ReadConfigText(const std::string& path) {
  // A regular file of a sane size only (common/safe_file.h): /dev/zero would
  // grow the text until bad_alloc, and a FIFO would block check-config, or the
  // daemon's SIGHUP reload, until a writer showed up.
  FileText file = ReadLimitedFile(path, kMaxConfigBytes);
  if (!file.ok()) return std::vector<ConfigError>{{"", 0, std::move(file.problem)}};
  return std::move(file.text);
}

ConfigResult LoadConfigFile(const std::string& path, const KindSections& kinds) {
  auto text = ReadConfigText(path);
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&text)) return std::move(*errors);
  return ParseConfig(std::get<std::string>(text), kinds);
}

}  // namespace numaprobe::daemon
