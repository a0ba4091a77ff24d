// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_reader.h"

#include <climits>

#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

#include "daemon/config/config_values.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {
namespace {

// yaml-cpp marks are 0-based; operators count lines from 1.
int LineNumber(const YAML::Node& node) { return node.Mark().is_null() ? 0 : node.Mark().line + 1; }

// What was written instead of the expected value, for "expected X, got Y".
std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

std::string Join(const std::vector<std::string_view>& names, std::string_view separator) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

// Shortest round-trip decimal without an exponent: "[0.00001, 0.5]", not "[1e-05, 0.5]".
std::string FormatNumber(double value) {
  char buffer[400];  // enough for any double in fixed notation
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

}  // namespace

void ConfigErrors::Add(std::string key, int line, std::string message) {
  if (errors_.size() >= kMaxConfigErrors) {
    ++dropped_;
    return;
  }
  errors_.push_back(ConfigError{std::move(key), line, std::move(message)});
}

bool ConfigErrors::Has(std::string_view key) const {
  return std::any_of(errors_.begin(), errors_.end(), [&](const ConfigError& e) { return e.key == key; });
}

std::vector<ConfigError> ConfigErrors::Take() && {
  std::vector<ConfigError> errors = std::move(errors_);
  if (dropped_ > 0) {
    errors.push_back(ConfigError{"", 0,
                                 std::to_string(dropped_) + " more errors not listed (only the first " +
                                     std::to_string(kMaxConfigErrors) + " are)"});
  }
  return errors;
}

int ConfigErrors::LineOf(std::string_view key) const {
  for (const auto& [name, line] : lines_) {
    if (name == key) return line;
  }
  return 0;
}

ConfigSection::ConfigSection(ConfigErrors& errors, const YAML::Node& node, std::string path, int line,
                             const std::vector<std::string_view>& known_keys)
    : errors_(&errors), path_(std::move(path)), line_(line) {
  if (node.IsNull() || !node.IsDefined()) return;
  if (!node.IsMap()) {
    errors.Add(path_, line_ != 0 ? line_ : LineNumber(node), "expected a mapping, got " + Describe(node));
    return;
  }
  for (const auto& item : node) {
    const int key_line = LineNumber(item.first);
    if (!item.first.IsScalar()) {
      errors.Add(path_, key_line, "a key must be a name, got " + Describe(item.first));
      continue;
    }
    const std::string& key = item.first.Scalar();
    if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
      std::string message = "unknown key";
      if (auto guess = ClosestName(key, known_keys)) message += " (did you mean " + *guess + "?)";
      errors.Add(Dotted(key), key_line, std::move(message));
      continue;
    }
    // yaml-cpp keeps both copies of a repeated key; which one wins is not
    // something an operator should have to know.
    if (const Entry* first = FindEntry(key)) {
      errors.Add(Dotted(key), key_line, "duplicate key (first set on line " + std::to_string(first->line) + ")");
      continue;
    }
    entries_.push_back(Entry{key, key_line, item.second});
    errors.NoteLine(Dotted(key), key_line);
  }
}

const ConfigSection::Entry* ConfigSection::FindEntry(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

std::string ConfigSection::Dotted(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ConfigSection::Error(std::string_view key, std::string message) {
  const Entry* entry = FindEntry(key);
  errors_->Add(Dotted(key), entry != nullptr ? entry->line : line_, std::move(message));
}

ConfigSection ConfigSection::Section(std::string_view key, const std::vector<std::string_view>& known_keys) {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return ConfigSection(*errors_, YAML::Node(), Dotted(key), 0, known_keys);
  return ConfigSection(*errors_, entry->value, Dotted(key), entry->line, known_keys);
}

std::optional<std::pair<std::string, int>> ConfigSection::Scalar(std::string_view key, std::string_view expected) {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return std::nullopt;
  if (!entry->value.IsScalar()) {
    Error(key, "expected " + std::string(expected) + ", got " + Describe(entry->value));
    return std::nullopt;
  }
  return std::make_pair(entry->value.Scalar(), entry->line);
}

void ConfigSection::Bool(std::string_view key, bool& out) {
  auto text = Scalar(key, "true or false");
  if (!text) return;
  auto parsed = ParseBool(text->first);
  if (auto* error = std::get_if<std::string>(&parsed)) return Error(key, *error);
  out = std::get<bool>(parsed);
}

void ConfigSection::Integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) {
  auto text = Scalar(key, "an integer");
  if (!text) return;
  auto parsed = ParseInteger(text->first);
  if (auto* error = std::get_if<std::string>(&parsed)) return Error(key, *error);
  const std::int64_t value = std::get<std::int64_t>(parsed);
  if (value < min || value > max) {
    return Error(key, text->first + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  out = value;
}

void ConfigSection::Number(std::string_view key, NumberRange range, double& out) {
  auto text = Scalar(key, "a number");
  if (!text) return;
  auto parsed = ParseNumber(text->first);
  if (auto* error = std::get_if<std::string>(&parsed)) return Error(key, *error);
  const double value = std::get<double>(parsed);
  const bool above_min = range.min_open ? value > range.min : value >= range.min;
  if (!above_min || value > range.max) {
    return Error(key, text->first + " is out of range " + (range.min_open ? "(" : "[") + FormatNumber(range.min) +
                          ", " + FormatNumber(range.max) + "]");
  }
  out = value;
}

void ConfigSection::NumberOrAuto(std::string_view key, NumberRange range, double& out) {
  const Entry* entry = FindEntry(key);
  if (entry != nullptr && entry->value.IsScalar() && entry->value.Scalar() == "auto") {
    out = 0;
    return;
  }
  Number(key, range, out);
}

void ConfigSection::StringList(std::string_view key, std::vector<std::string>& out) {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return;
  if (entry->value.IsNull()) return out.clear();
  if (!entry->value.IsSequence())
    return Error(key, "expected a list such as [\"kernel=6.6.13-amd64\"], got " + Describe(entry->value));
  std::vector<std::string> items;
  for (const YAML::Node& item : entry->value) {
    if (!item.IsScalar()) return Error(key, "expected a list of strings, got an item that is " + Describe(item));
    items.push_back(item.Scalar());
  }
  out = std::move(items);
}

void ConfigSection::Size(std::string_view key, std::uint64_t min, std::uint64_t max, std::size_t& out) {
  auto text = Scalar(key, "a size such as 256MiB");
  if (!text) return;
  auto parsed = ParseSize(text->first);
  if (auto* error = std::get_if<std::string>(&parsed)) return Error(key, *error);
  const std::uint64_t value = std::get<std::uint64_t>(parsed);
  if (value < min || value > max) {
    return Error(key, text->first + " is out of range [" + FormatSize(min) + ", " + FormatSize(max) + "]");
  }
  out = static_cast<std::size_t>(value);
}

void ConfigSection::Duration(std::string_view key, std::chrono::milliseconds min, std::chrono::milliseconds max,
                             std::chrono::milliseconds& out) {
  auto text = Scalar(key, "a duration such as 5m");
  if (!text) return;
  auto parsed = ParseDuration(text->first);
  if (auto* error = std::get_if<std::string>(&parsed)) return Error(key, *error);
  const auto value = std::get<std::chrono::milliseconds>(parsed);
  if (value < min || value > max) {
    return Error(key, text->first + " is out of range [" + FormatDuration(min) + ", " + FormatDuration(max) + "]");
  }
  out = value;
}

void ConfigSection::String(std::string_view key, std::string& out) {
  if (auto text = Scalar(key, "a string")) out = text->first;
}

void ConfigSection::IdList(std::string_view key, std::vector<int>& out) {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return;
  if (entry->value.IsNull()) return out.clear();  // "cpus:" with nothing after it: automatic
  if (entry->value.IsScalar()) {
    auto parsed = kernels::ParseCpuList(entry->value.Scalar());
    if (!parsed.ok()) return Error(key, parsed.failure().reason);
    out = std::move(parsed).value();
    return;
  }
  if (!entry->value.IsSequence()) {
    return Error(key, "expected a list such as \"0-3,8\" or [0, 1, 2], got " + Describe(entry->value));
  }
  std::vector<int> ids;
  bool ok = true;
  for (const YAML::Node& item : entry->value) {
    // Same bound as the kernel's list parser: larger ids are typos.
    std::optional<std::int64_t> id;
    if (item.IsScalar()) {
      auto parsed = ParseInteger(item.Scalar());
      if (const auto* value = std::get_if<std::int64_t>(&parsed)) id = *value;
    }
    if (!id || *id < 0 || *id >= (1 << 16)) {
      errors_->Add(Dotted(key), LineNumber(item) != 0 ? LineNumber(item) : entry->line,
                   "expected an id in [0, 65535], got " + Describe(item));
      ok = false;
      continue;
    }
    ids.push_back(static_cast<int>(*id));
  }
  if (!ok) return;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  out = std::move(ids);
}

std::optional<std::size_t> ConfigSection::Choice(std::string_view key, const std::vector<std::string_view>& names) {
  auto text = Scalar(key, "one of " + Join(names, ", "));
  if (!text) return std::nullopt;
  auto found = std::find(names.begin(), names.end(), text->first);
  if (found == names.end()) {
    Error(key, "expected one of " + Join(names, ", ") + ", got '" + text->first + "'");
    return std::nullopt;
  }
  return static_cast<std::size_t>(found - names.begin());
}

std::optional<std::vector<std::size_t>> ConfigSection::ChoiceList(std::string_view key,
                                                                  const std::vector<std::string_view>& names,
                                                                  const std::vector<std::string>& /*current*/) {
  const Entry* entry = FindEntry(key);
  if (entry == nullptr) return std::nullopt;
  const std::string expected = "expected a list such as [" + Join(names, ", ") + "]";
  if (!entry->value.IsSequence()) {
    Error(key, expected + ", got " + Describe(entry->value));
    return std::nullopt;
  }
  if (entry->value.size() == 0) {
    Error(key, "must not be empty");
    return std::nullopt;
  }
  std::vector<std::size_t> chosen;
  bool ok = true;
  for (const YAML::Node& item : entry->value) {
    const int line = LineNumber(item) != 0 ? LineNumber(item) : entry->line;
    auto found = item.IsScalar() ? std::find(names.begin(), names.end(), item.Scalar()) : names.end();
    if (found == names.end()) {
      errors_->Add(Dotted(key), line, "expected one of " + Join(names, ", ") + ", got " + Describe(item));
      ok = false;
      continue;
    }
    const auto index = static_cast<std::size_t>(found - names.begin());
    if (std::find(chosen.begin(), chosen.end(), index) != chosen.end()) {
      errors_->Add(Dotted(key), line, "'" + item.Scalar() + "' is listed twice");
      ok = false;
      continue;
    }
    chosen.push_back(index);
  }
  if (!ok) return std::nullopt;
  return chosen;
}

namespace {

// Walks the documents without building them: where each starts, and whether
// one is nested deeper or holds more nodes than a configuration ever needs.
// yaml-cpp builds ~500 bytes per node, so a 1 MiB file of "1," would cost
// hundreds of MB as a tree; and it refuses nesting past 500 levels only with
// the words "bad file".
class DocumentScan final : public YAML::EventHandler {
 public:
  struct TooLarge {
    int line;
    std::string message;
  };
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override {
    marks.push_back(mark);
    depth_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    Count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Count(const YAML::Mark& mark) {
    if (++nodes_ > kMaxYamlNodes) {
      throw TooLarge{mark.line + 1, "more than " + std::to_string(kMaxYamlNodes) +
                                        " YAML nodes (values, lists and mappings), the limit for a configuration file"};
    }
  }
  void Enter(const YAML::Mark& mark) {
    Count(mark);
    if (++depth_ > kMaxYamlDepth) {
      throw TooLarge{mark.line + 1,
                     "lists and mappings nested deeper than the limit of " + std::to_string(kMaxYamlDepth) + " levels"};
    }
  }
  int depth_ = 0;
  int nodes_ = 0;
};

}  // namespace

std::optional<YAML::Node> LoadOneDocument(std::string_view text, ConfigErrors& errors) {
  // Callers catch YAML::Exception (syntax errors) themselves.
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentScan starts;
  try {
    // At most two documents are looked at: a second one is already an error.
    for (int calls = 0; calls < 2 && parser.HandleNextDocument(starts); ++calls) {
      const std::size_t n = starts.marks.size();
      if (n == 0 || (n >= 2 && starts.marks[n - 1].pos == starts.marks[n - 2].pos)) {
        // No progress: yaml-cpp stopped at a token it cannot start a document with.
        const int line = n == 0 ? 0 : starts.marks[n - 1].line + 1;
        errors.Add("", line, "invalid YAML: unexpected character at the start of a document");
        return std::nullopt;
      }
    }
  } catch (const DocumentScan::TooLarge& too_large) {
    errors.Add("", too_large.line, too_large.message);
    return std::nullopt;
  }
  if (starts.marks.size() > 1) {
    errors.Add("", 0, "expected one YAML document, found more");
    return std::nullopt;
  }
  if (starts.marks.empty()) return YAML::Node();
  return YAML::Load(std::string(text));
}

std::vector<ConfigError> ConfigErrors::TakeInFileOrder() && {
  std::stable_sort(errors_.begin(), errors_.end(), [](const ConfigError& a, const ConfigError& b) {
    return (a.line == 0 ? INT_MAX : a.line) < (b.line == 0 ? INT_MAX : b.line);
  });
  return std::move(*this).Take();  // the count of the others last
}

}  // namespace numaprobe::daemon
