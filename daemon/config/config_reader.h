// SPDX-License-Identifier: Apache-2.0
// The YAML half of config parsing: walks one mapping of the document, refuses
// keys it does not know, converts values (config_values.h) and checks their
// range. Every problem is recorded, with its dotted key and 1-based line, in a
// ConfigErrors shared by the whole document, and the walk goes on: an operator
// fixing a file wants all of its mistakes at once. A getter leaves its output
// untouched when the key is absent or wrong, so the default stays in place.
//
// Internal to daemon/config.cc; nothing else should see yaml-cpp types.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/config/section_keys.h"

namespace numaprobe::daemon {

class ConfigErrors;

// What a configuration (or web configuration) file may hold. A documented
// config is about a hundred nodes and 4 levels deep; 32768 nodes lists every
// CPU of an 8192-CPU kernel several times over, and costs yaml-cpp about
// 17 MB while the tree lives (~500 bytes a node).
inline constexpr int kMaxYamlNodes = 32768;
inline constexpr int kMaxYamlDepth = 64;
// Errors kept (and logged) for one file: an operator fixes the first ones
// first, and a file of 50,000 unknown keys must not log 50,000 lines on
// every SIGHUP. The rest are counted in one last error.
inline constexpr std::size_t kMaxConfigErrors = 50;

// The one YAML document of `text` (a null node for an empty text), or nullopt
// with the error recorded: more than one document, more than kMaxYamlNodes
// nodes or kMaxYamlDepth levels (named in the error). Instead of
// YAML::LoadAll, which in yaml-cpp 0.7 loops forever on a document that
// starts with ',' (found by tests/fuzz/fuzz_config).
std::optional<YAML::Node> LoadOneDocument(std::string_view text, ConfigErrors& errors);

class ConfigErrors {
 public:
  void Add(std::string key, int line, std::string message);
  bool Has(std::string_view key) const;  // an error was recorded for exactly this key
  // The 1-based line `key` was written on, 0 if it was not written.
  int LineOf(std::string_view key) const;
  void NoteLine(std::string key, int line) { lines_.emplace_back(std::move(key), line); }
  bool empty() const { return errors_.empty(); }
  // Past kMaxConfigErrors, a last error says how many more were found.
  std::vector<ConfigError> Take() &&;
  // In file order, as an operator fixes them; errors without a line last.
  std::vector<ConfigError> TakeInFileOrder() &&;

 private:
  std::vector<ConfigError> errors_;
  std::size_t dropped_ = 0;  // errors past kMaxConfigErrors
  std::vector<std::pair<std::string, int>> lines_;
};

// A closed or half-open interval for messages like "0.9 is out of range (0, 0.5]".
struct NumberRange {
  double min;
  double max;
  bool min_open = false;
};

class ConfigSection final : public SectionKeys {
 public:
  // `node` is the mapping at dotted `path` ("" for the document), written on
  // `line`. A null node is an empty section: every key keeps its default.
  ConfigSection(ConfigErrors& errors, const YAML::Node& node, std::string path, int line,
                const std::vector<std::string_view>& known_keys);

  // The nested mapping under `key` (empty when absent or not a mapping).
  ConfigSection Section(std::string_view key, const std::vector<std::string_view>& known_keys);

  void Bool(std::string_view key, bool& out) override;
  using SectionKeys::Integer;
  void Integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) override;
  void Number(std::string_view key, NumberRange range, double& out);
  void Number(std::string_view key, double min, double max, double& out) override {
    Number(key, NumberRange{min, max}, out);
  }
  // A number in `range`, or the word "auto" (out = 0: the caller derives it).
  void NumberOrAuto(std::string_view key, NumberRange range, double& out);
  void Size(std::string_view key, std::uint64_t min, std::uint64_t max, std::size_t& out) override;
  void Duration(std::string_view key, std::chrono::milliseconds min, std::chrono::milliseconds max,
                std::chrono::milliseconds& out) override;
  void String(std::string_view key, std::string& out);
  // A list of strings ([a, b] or an empty value for none).
  void StringList(std::string_view key, std::vector<std::string>& out);
  void IdList(std::string_view key, std::vector<int>& out) override;

  // One of `names`; returns its index.
  std::optional<std::size_t> Choice(std::string_view key, const std::vector<std::string_view>& names);
  std::optional<std::vector<std::size_t>> ChoiceList(std::string_view key, const std::vector<std::string_view>& names,
                                                     const std::vector<std::string>& current) override;

  void Error(std::string_view key, std::string message) override;
  bool Has(std::string_view key) const override { return FindEntry(key) != nullptr; }
  bool HasError(std::string_view key) const override { return errors_->Has(Dotted(key)); }
  const std::string& path() const { return path_; }
  int line() const { return line_; }

 private:
  struct Entry {
    std::string key;
    int line;
    YAML::Node value;
  };
  const Entry* FindEntry(std::string_view key) const;
  std::string Dotted(std::string_view key) const;
  // The scalar text under `key`, or nullopt (absent, or an error recorded
  // saying `expected` - "an integer" - and what was written instead).
  std::optional<std::pair<std::string, int>> Scalar(std::string_view key, std::string_view expected);

  ConfigErrors* errors_;
  std::string path_;
  int line_;
  std::vector<Entry> entries_;
};

}  // namespace numaprobe::daemon
