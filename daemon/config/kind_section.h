// SPDX-License-Identifier: Apache-2.0
// A probe kind's part of the configuration: its section probes.<name> and its
// options under `targets`. Each kind declares its keys, ranges, defaults and
// cross-key rules in its module (probing/kinds/); config/ sits below the
// kinds, so ParseConfig is handed the kinds' sections by its caller
// (probing/probe_table.h, ProbeTableSections()) and reads them generically.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/typed_values.h"
#include "daemon/config/kind_setting.h"
#include "daemon/config/plan_options.h"
#include "daemon/config/section_keys.h"

namespace numaprobe::daemon {

struct Config;

// A probe buffer a section sizes: its key in the section and its bytes.
struct ConfiguredBuffer {
  std::string key;
  std::size_t bytes = 0;
};

class KindSection {
 public:
  virtual ~KindSection() = default;

  // The one name of the kind: config section, `--tests` value, probe label,
  // JSON key.
  virtual std::string_view name() const = 0;
  // The keys of probes.<name>; any other key is an error naming it.
  // ConfigKeysOf(the keys that are not numeric settings, Settings()).
  virtual std::vector<std::string_view> ConfigKeys() const = 0;
  // The kind's numeric settings, each declared once (kind_setting.h): what
  // ReadConfig reads and RegisterFlags adds, with their ranges.
  virtual std::vector<KindSetting> Settings() const { return {}; }
  // Reads probes.<name> into the kind's own type in `probes`
  // (Config::probes.Of<T>()), checking ranges and the section's cross-key
  // rules. Absent keys keep the type's defaults.
  virtual void ReadConfig(SectionKeys& section, TypedValues& probes) const = 0;
  // Whether the daemon schedules the kind under `config`.
  virtual bool Enabled(const Config& config) const = 0;
  // The probe buffers `config` sizes for this kind; none may be larger than
  // memory.budget.
  virtual std::vector<ConfiguredBuffer> ConfiguredBuffers(const Config& /*config*/) const { return {}; }
  // The kind's own options under `targets` (PlanOptions::kind_cpus).
  virtual std::vector<std::string_view> TargetKeys() const { return {}; }
  virtual void ReadTargets(SectionKeys& /*targets*/, PlanOptions& /*options*/) const {}
};

using KindSections = std::vector<const KindSection*>;

}  // namespace numaprobe::daemon
