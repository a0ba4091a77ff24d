// SPDX-License-Identifier: Apache-2.0
// One numeric setting of a probe kind, declared once in the kind's module: its
// key in probes.<kind>, its `numaprobe probe` flag, its range and any rule
// beyond the range. The kind's ReadConfig reads the key through ReadSetting
// and its RegisterFlags adds the flag through FlagRegistry::AddSetting, both
// from the declaration, so the file and the command line accept exactly the
// same values and say the same thing about a wrong one. The settings test
// (tests/daemon/kind_settings_test.cc) holds both readers and the manual page
// and reference file to every declaration of the probe table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/section_keys.h"

namespace numaprobe::daemon {

struct KindSetting {
  std::string_view key;   // in probes.<kind>; "" when only `numaprobe probe` sets it
  std::string_view flag;  // "--samples"; "" when only the configuration sets it
  std::int64_t min = 0;
  std::int64_t max = 0;
  bool bytes = false;  // a size, written as 256MiB in both places
  // A rule beyond the range: "" when `value` keeps it, else what is wrong
  // with it, as the error names it ("96 is not a power of two ...").
  std::string (*rule)(std::uint64_t value) = nullptr;
  std::string_view help;  // the flag's --help text

  // The range as both readers' errors state it: "[1, 1000]", "[64KiB, 64TiB]".
  std::string RangeText() const;
  // What is wrong with `value` ("" if nothing): the range, then the rule.
  // `written` is the value as the operator wrote it.
  std::string Problem(std::int64_t value, std::string_view written) const;
};

// Reads `setting` from its kind's section: out of range or against the rule
// is an error naming the key, and `out` keeps its value.
void ReadSetting(SectionKeys& section, const KindSetting& setting, std::int64_t& out);
template <class T>
void ReadSetting(SectionKeys& section, const KindSetting& setting, T& out) {
  std::int64_t value = static_cast<std::int64_t>(out);
  ReadSetting(section, setting, value);
  out = static_cast<T>(value);
}

// The keys of `settings` that the configuration has, after `others` (the
// section's keys that are not numeric: enabled, ops): a kind's ConfigKeys.
std::vector<std::string_view> ConfigKeysOf(std::vector<std::string_view> others,
                                           const std::vector<KindSetting>& settings);

// Rules shared by kinds.
std::string PowerOfTwoRule(std::uint64_t value);       // a stride: 64, 128, ...
std::string WholeCacheLinesRule(std::uint64_t value);  // bytes moved by whole 64-byte lines

}  // namespace numaprobe::daemon
