// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/kind_setting.h"

#include <bit>

#include "daemon/config/config_values.h"

namespace numaprobe::daemon {

namespace {

std::string Bound(const KindSetting& setting, std::int64_t value) {
  return setting.bytes ? FormatSize(static_cast<std::uint64_t>(value)) : std::to_string(value);
}

}  // namespace

std::string KindSetting::RangeText() const { return "[" + Bound(*this, min) + ", " + Bound(*this, max) + "]"; }

std::string KindSetting::Problem(std::int64_t value, std::string_view written) const {
  if (value < min || value > max) return std::string(written) + " is out of range " + RangeText();
  return rule != nullptr ? rule(static_cast<std::uint64_t>(value)) : "";
}

void ReadSetting(SectionKeys& section, const KindSetting& setting, std::int64_t& out) {
  // The section's own reader parses and checks the range (its errors carry
  // the line); the rule is checked on what it read.
  std::int64_t value = out;
  if (setting.bytes) {
    std::size_t bytes = static_cast<std::size_t>(out);
    section.Size(setting.key, static_cast<std::uint64_t>(setting.min), static_cast<std::uint64_t>(setting.max), bytes);
    value = static_cast<std::int64_t>(bytes);
  } else {
    section.Integer(setting.key, setting.min, setting.max, value);
  }
  if (section.HasError(setting.key)) return;
  if (std::string problem = setting.Problem(value, std::to_string(value)); !problem.empty()) {
    return section.Error(setting.key, problem);
  }
  out = value;
}

std::vector<std::string_view> ConfigKeysOf(std::vector<std::string_view> others,
                                           const std::vector<KindSetting>& settings) {
  for (const KindSetting& setting : settings) {
    if (!setting.key.empty()) others.push_back(setting.key);
  }
  return others;
}

std::string PowerOfTwoRule(std::uint64_t value) {
  return std::has_single_bit(value) ? "" : std::to_string(value) + " is not a power of two";
}

std::string WholeCacheLinesRule(std::uint64_t value) {
  return value % 64 == 0 ? "" : FormatSize(value) + " is not a multiple of 64 bytes";
}

}  // namespace numaprobe::daemon
