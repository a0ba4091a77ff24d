// SPDX-License-Identifier: Apache-2.0
// The keys of one mapping of the configuration, as the code above config/
// reads them: a probe kind's section (probes.<kind>) and its target options
// are read by the kind's module through this, without yaml-cpp types. Every
// getter leaves its output untouched when the key is absent or wrong (so the
// default stays), and records what is wrong with the dotted key and its line
// (config_reader.h implements it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace numaprobe::daemon {

// No probe buffer or budget needs more (64 TiB); a larger size is a typo.
inline constexpr std::uint64_t kMaxConfigSizeBytes = std::uint64_t{64} << 40;

class SectionKeys {
 public:
  virtual ~SectionKeys() = default;

  virtual void Bool(std::string_view key, bool& out) = 0;
  virtual void Integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) = 0;
  template <class T>
  void Integer(std::string_view key, std::int64_t min, std::int64_t max, T& out) {
    std::int64_t value = static_cast<std::int64_t>(out);
    Integer(key, min, max, value);
    out = static_cast<T>(value);
  }
  // A number in [min, max].
  virtual void Number(std::string_view key, double min, double max, double& out) = 0;
  // A duration in [min, max]: 90s, 5m, 6h.
  virtual void Duration(std::string_view key, std::chrono::milliseconds min, std::chrono::milliseconds max,
                        std::chrono::milliseconds& out) = 0;
  // A byte size: 64MiB, 1GiB, or plain bytes.
  virtual void Size(std::string_view key, std::uint64_t min, std::uint64_t max, std::size_t& out) = 0;
  // A CPU or node list: a string in the kernel's list format ("0-3,8") or a
  // YAML list of integers; either way sorted and duplicate-free.
  virtual void IdList(std::string_view key, std::vector<int>& out) = 0;
  // A non-empty YAML list of distinct `names`; returns their indices.
  // `current`: the names the setting holds now, what stays when the key is
  // absent (a reader that writes the effective configuration out shows them).
  virtual std::optional<std::vector<std::size_t>> ChoiceList(std::string_view key,
                                                             const std::vector<std::string_view>& names,
                                                             const std::vector<std::string>& current) = 0;

  // Records a problem with `key` found by the caller (a cross-field rule).
  virtual void Error(std::string_view key, std::string message) = 0;
  // Whether `key` is written in this mapping.
  virtual bool Has(std::string_view key) const = 0;
  // Whether an error was recorded for `key` of this mapping.
  virtual bool HasError(std::string_view key) const = 0;
};

}  // namespace numaprobe::daemon
