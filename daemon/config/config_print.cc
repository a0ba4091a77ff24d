// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_print.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config_values.h"
#include "kernels/cpulist.h"
#include "kernels/result.h"

namespace numaprobe::daemon {
namespace {

// Emits a list of ids as the reference spells it: [] when empty (automatic),
// else the kernel's list format ("0-3,8"), which ParseConfig reads back.
void EmitIds(YAML::Emitter& out, const std::vector<int>& ids) {
  if (ids.empty()) {
    out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
  } else {
    out << YAML::DoubleQuoted << kernels::FormatCpuList(ids);
  }
}

// A section read back: a kind's ReadConfig (or ReadTargets) run over the
// values `config` already holds. Every getter finds its output set to the
// effective value and writes it out instead of changing it; nothing is absent
// and nothing is wrong, so Has, HasError and Error have nothing to say.
class SectionWriter final : public SectionKeys {
 public:
  explicit SectionWriter(YAML::Emitter& out) : out_(out) {}

  void Bool(std::string_view key, bool& value) override { Key(key) << value; }
  void Integer(std::string_view key, std::int64_t, std::int64_t, std::int64_t& value) override { Key(key) << value; }
  void Number(std::string_view key, double, double, double& value) override { Key(key) << fmt::format("{}", value); }
  void Duration(std::string_view key, std::chrono::milliseconds, std::chrono::milliseconds,
                std::chrono::milliseconds& value) override {
    Key(key) << FormatDuration(value);
  }
  void Size(std::string_view key, std::uint64_t, std::uint64_t, std::size_t& value) override {
    Key(key) << FormatSize(value);
  }
  void IdList(std::string_view key, std::vector<int>& value) override { EmitIds(Key(key), value); }
  std::optional<std::vector<std::size_t>> ChoiceList(std::string_view key, const std::vector<std::string_view>&,
                                                     const std::vector<std::string>& current) override {
    Key(key) << YAML::Flow << current;
    return std::nullopt;
  }
  void Error(std::string_view, std::string) override {}
  bool Has(std::string_view) const override { return false; }
  bool HasError(std::string_view) const override { return false; }

 private:
  YAML::Emitter& Key(std::string_view key) { return out_ << YAML::Key << std::string(key) << YAML::Value; }
  YAML::Emitter& out_;
};

std::string_view PriorityName(ProbePriority priority) { return priority == ProbePriority::kNice19 ? "nice19" : "idle"; }

}  // namespace

std::string FormatConfig(const Config& config, const KindSections& kinds) {
  YAML::Emitter out;
  out << YAML::BeginMap;

  out << YAML::Key << "probes" << YAML::Value << YAML::BeginMap;
  for (const KindSection* kind : kinds) {
    out << YAML::Key << std::string(kind->name()) << YAML::Value << YAML::BeginMap;
    TypedValues probes = config.probes;  // ReadConfig takes it by reference; it is not changed
    SectionWriter writer(out);
    kind->ReadConfig(writer, probes);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  out << YAML::Key << "targets" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cpus" << YAML::Value;
  EmitIds(out, config.targets.cpus);
  out << YAML::Key << "mem_nodes" << YAML::Value;
  EmitIds(out, config.targets.mem_nodes);
  out << YAML::Key << "per_cpu" << YAML::Value << config.targets.per_cpu;
  for (const KindSection* kind : kinds) {
    PlanOptions targets = config.targets;
    SectionWriter writer(out);
    kind->ReadTargets(writer, targets);
  }
  out << YAML::EndMap;

  out << YAML::Key << "schedule" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "duty_cycle" << YAML::Value << fmt::format("{}", config.schedule.duty_cycle);
  // 0 is how the reader keeps `auto` (the budget then follows the host's CPUs).
  out << YAML::Key << "learning_duty_cycle" << YAML::Value
      << (config.schedule.learning_duty_cycle > 0 ? fmt::format("{}", config.schedule.learning_duty_cycle)
                                                  : std::string("auto"));
  out << YAML::Key << "interval" << YAML::Value << FormatDuration(config.schedule.interval);
  out << YAML::Key << "jitter" << YAML::Value << fmt::format("{}", config.schedule.jitter);
  out << YAML::Key << "priority" << YAML::Value << std::string(PriorityName(config.schedule.priority));
  out << YAML::EndMap;

  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "budget" << YAML::Value << FormatSize(config.memory.budget_bytes);
  out << YAML::Key << "pages" << YAML::Value << std::string(kernels::PagePolicyName(config.memory.pages));
  out << YAML::EndMap;

  out << YAML::Key << "baseline" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "rounds" << YAML::Value << config.baseline.rounds;
  out << YAML::Key << "accept_changes" << YAML::Value << YAML::Flow << config.baseline.accept_changes;
  out << YAML::EndMap;

  out << YAML::Key << "state_directory" << YAML::Value << config.state_directory;
  out << YAML::Key << "probe_lock_file" << YAML::Value << YAML::DoubleQuoted << config.probe_lock_file;
  out << YAML::Key << "node_feature_directory" << YAML::Value << YAML::DoubleQuoted << config.node_feature_directory;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace numaprobe::daemon
