// SPDX-License-Identifier: Apache-2.0
// KindCommandLine: a probe kind's part of the command line, a role of its own
// beside planning, running and exposition (probe_kind.h): the flags it adds to
// `numaprobe probe` and `numaprobe topology`, and how `topology` shows the
// targets it planned itself. A kind with flags implements it and returns it
// from ProbeKind::command_line(); cli/ and the topology output (output/) call
// it, the daemon never does.
//
// Thread safety: implementations are the kinds' immutable singletons; every
// method is const and reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/config/kind_setting.h"
#include "daemon/config/plan_options.h"
#include "daemon/probing/probe_target.h"

namespace numaprobe::daemon {

struct ProbeSettings;  // probe_settings.h

// Options a kind adds to `numaprobe probe` (and `topology`), registered through this neutral
// interface so kinds do not depend on the CLI library (cli/ implements it).
// Sizes are std::size_t and counts std::uint64_t: one type on the LP64 targets.
static_assert(std::is_same_v<std::size_t, std::uint64_t>);

class FlagRegistry {
 public:
  virtual ~FlagRegistry() = default;
  // The flag of a numeric setting (config/kind_setting.h), checked against
  // its range and rule as the configuration checks its key; `kind` names the
  // section the key is in (probes.<kind>), which the help shows.
  virtual void AddSetting(std::string_view kind, const KindSetting& setting, int& value) = 0;
  virtual void AddSetting(std::string_view kind, const KindSetting& setting, std::uint64_t& value) = 0;
  virtual void AddIntList(const std::string& flag, std::vector<int>& value, int min, int max,
                          const std::string& help) = 0;
  // A CPU (or node) list as sysfs and the configuration file write it
  // (0,8-11); `store` gets it, only if the flag is given.
  virtual void AddCpuList(const std::string& flag, std::function<void(std::vector<int>)> store,
                          const std::string& help) = 0;
  virtual void AddChoices(const std::string& flag, std::vector<std::string>& value,
                          const std::vector<std::string>& choices, const std::string& help) = 0;
  // An enum (list) named by `by_name` (any case) -> its value; `store` gets
  // the values given, only if the flag is given.
  virtual void AddEnum(const std::string& flag, const std::map<std::string, int>& by_name,
                       std::function<void(int)> store, const std::string& help) = 0;
  virtual void AddEnumList(const std::string& flag, const std::map<std::string, int>& by_name,
                           std::function<void(const std::vector<int>&)> store, const std::string& help) = 0;
};

// The name -> value map of an enum for FlagRegistry::AddEnum(List).
template <class E, std::size_t N>
std::map<std::string, int> EnumByName(const E (&values)[N], std::string_view (*name)(E)) {
  std::map<std::string, int> by_name;
  for (E value : values) by_name.emplace(name(value), static_cast<int>(value));
  return by_name;
}

class KindCommandLine {
 public:
  virtual ~KindCommandLine() = default;

  // `numaprobe probe` options of this kind, writing into `settings`.
  virtual void RegisterFlags(FlagRegistry& /*flags*/, ProbeSettings& /*settings*/) const {}
  // After the flags are parsed: settings this kind takes from another kind's
  // flag (core_to_core counts --samples too).
  virtual void AfterFlags(ProbeSettings& /*settings*/) const {}
  // After AfterFlags, for a kind `numaprobe probe` will run: what is wrong
  // with its settings across flags ("" if nothing), the cross-key rule its
  // ReadConfig checks, as a usage error naming the flags.
  virtual std::string FlagsProblem(const ProbeSettings& /*settings*/) const { return ""; }

  // The options of `numaprobe probe` and `numaprobe topology` that choose
  // the kind's own targets (ProbeKind::PlanTargets), writing into `options`.
  virtual void RegisterPlanFlags(FlagRegistry& /*flags*/, PlanOptions& /*options*/) const {}
  // How `numaprobe topology` shows the targets the kind planned itself
  // (`planned`, perhaps empty): its keys in the plan's JSON object, and its
  // line of the table ("" for none). Nothing for kinds that plan none.
  virtual nlohmann::json PlannedToJson(const std::vector<ProbeTarget>& /*planned*/) const {
    return nlohmann::json::object();
  }
  virtual std::string PlannedToText(const std::vector<ProbeTarget>& /*planned*/) const { return ""; }
};

}  // namespace numaprobe::daemon
