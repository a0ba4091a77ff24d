#include "daemon/serve/state_format.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "daemon/output/json_text.h"

namespace numaprobe::daemon {
namespace {

using nlohmann::json;

// Bump when the layout changes incompatibly; an unknown version is treated as
// corrupt (reported, then replaced), never guessed at.
constexpr int kFormatVersion = 1;

// Schema checks that name the offending key: nlohmann's own messages
// ("type must be string, but is number") do not say which field it was.
const json& Field(const json& object, const std::string& where, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) throw std::runtime_error(fmt::format("{}.{}: missing", where, key));
  return *it;
}

std::string StringField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_string()) throw std::runtime_error(fmt::format("{}.{}: expected a string", where, key));
  return v.get<std::string>();
}

int IntField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  // get<int>() would silently wrap 4294967296 to 0: a CPU or node id out of
  // int range is a defect of the file, not a value to guess at.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT_MAX) ||
      (!v.is_number_unsigned() && (v.get<std::int64_t>() < INT_MIN || v.get<std::int64_t>() > INT_MAX))) {
    throw std::runtime_error(fmt::format("{}.{}: expected an integer in int range", where, key));
  }
  return v.get<int>();
}

unsigned long long CountField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_number_unsigned()) throw std::runtime_error(fmt::format("{}.{}: expected a count (0 or more)", where, key));
  return v.get<unsigned long long>();
}

Baseline ParseBaseline(const json& j) {
  if (!j.is_object()) throw std::runtime_error("baseline: expected an object");
  Baseline baseline;
  baseline.fingerprint = StringField(j, "baseline", "fingerprint");
  // Absent in files written before the settings were recorded: such a
  // baseline matches no settings and is re-recorded.
  if (j.contains("settings")) baseline.settings = StringField(j, "baseline", "settings");
  baseline.created = StringField(j, "baseline", "created");
  const json& complete = Field(j, "baseline", "complete");
  if (!complete.is_boolean()) throw std::runtime_error("baseline.complete: expected true or false");
  baseline.complete = complete.get<bool>();
  const json& values = Field(j, "baseline", "values");
  if (!values.is_array()) throw std::runtime_error("baseline.values: expected an array");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = fmt::format("baseline.values[{}]", i);
    const json& item = values[i];
    if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
    BaselineValue v;
    v.probe = StringField(item, where, "probe");
    v.cpu = IntField(item, where, "cpu");
    v.cpu_node = IntField(item, where, "cpu_node");
    v.mem_node = IntField(item, where, "mem_node");
    v.op = StringField(item, where, "op");
    const json& value = Field(item, where, "value");
    if (!value.is_number()) throw std::runtime_error(where + ".value: expected a number");
    v.value = value.get<double>();
    if (item.contains("spread")) {
      const json& spread = item["spread"];
      if (!spread.is_number()) throw std::runtime_error(where + ".spread: expected a number");
      BaselineValue s = v;
      s.value = spread.get<double>();
      baseline.spread.push_back(std::move(s));
    }
    baseline.values.push_back(std::move(v));
  }
  // Spread for some values only would be inconsistent: keep all or none.
  if (!baseline.spread.empty() && baseline.spread.size() != baseline.values.size()) {
    throw std::runtime_error("baseline.values: spread present for some values only");
  }
  if (j.contains("topology")) baseline.topology = StringField(j, "baseline", "topology");
  if (j.contains("facts")) {
    const json& facts = j["facts"];
    if (!facts.is_object()) throw std::runtime_error("baseline.facts: expected an object");
    for (const auto& [key, value] : facts.items()) {
      if (!value.is_string()) throw std::runtime_error(fmt::format("baseline.facts.{}: expected a string", key));
      baseline.facts[key] = value.get<std::string>();
    }
  }
  if (j.contains("changes")) {
    const json& changes = j["changes"];
    if (!changes.is_array()) throw std::runtime_error("baseline.changes: expected an array");
    for (std::size_t i = 0; i < changes.size(); ++i) {
      const std::string where = fmt::format("baseline.changes[{}]", i);
      const json& item = changes[i];
      if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
      HostChange c;
      c.field = StringField(item, where, "field");
      c.before = StringField(item, where, "before");
      c.after = StringField(item, where, "after");
      const json& when = Field(item, where, "unix_seconds");
      if (!when.is_number()) throw std::runtime_error(where + ".unix_seconds: expected a number");
      c.unix_seconds = when.get<double>();
      baseline.changes.push_back(std::move(c));
    }
  }
  if (j.contains("memory_errors")) {
    const json& errors = j["memory_errors"];
    if (!errors.is_object()) throw std::runtime_error("baseline.memory_errors: expected an object");
    baseline.memory_errors = MemoryErrorCounts{CountField(errors, "baseline.memory_errors", "corrected"),
                                               CountField(errors, "baseline.memory_errors", "uncorrected")};
  }
  return baseline;
}

}  // namespace

LoadedState ParseState(std::string_view text, const std::string& path) {
  LoadedState state;
  // Everything below reports through one catch: a state file is replaceable,
  // so no defect in it may take the daemon down.
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    const auto format = j.find("format");
    if (format == j.end()) throw std::runtime_error("format: missing");
    if (!format->is_number_integer() || format->get<std::int64_t>() != kFormatVersion) {
      throw std::runtime_error(fmt::format("format: unsupported {} (expected {})", format->dump(), kFormatVersion));
    }
    // An absent or null baseline is a valid file: `numaprobe baseline reset`.
    if (const auto it = j.find("baseline"); it != j.end() && !it->is_null()) state.baseline = ParseBaseline(*it);
    if (!state.baseline) {
      state.marker = "reset";
      if (const auto it = j.find("marker"); it != j.end()) {
        if (!it->is_string() || (*it != "reset" && *it != "accept")) {
          throw std::runtime_error("marker: expected \"reset\" or \"accept\"");
        }
        state.marker = it->get<std::string>();
      }
    }
    state.status = LoadedState::Status::kOk;
  } catch (const std::exception& e) {  // nlohmann::json::exception derives from std::exception
    state.status = LoadedState::Status::kCorrupt;
    state.baseline.reset();
    state.marker.clear();
    state.error = fmt::format("invalid state file {}: {}", path, e.what());
  }
  return state;
}

std::optional<std::string> FormatState(const Baseline& baseline, std::string& error) {
  json values = json::array();
  for (const BaselineValue& v : baseline.values) {
    // JSON has no NaN or infinity (nlohmann would write null), and a file we
    // would later reject as corrupt must not be written in the first place.
    if (!std::isfinite(v.value)) {
      error = fmt::format("the {} value for nodes {}->{} is not finite", v.probe, v.cpu_node, v.mem_node);
      return std::nullopt;
    }
    values.push_back({{"probe", v.probe},
                      {"cpu", v.cpu},
                      {"cpu_node", v.cpu_node},
                      {"mem_node", v.mem_node},
                      {"op", v.op},
                      {"value", v.value}});
  }
  // spread is kept in the same order as values (BaselineRecorder sorts both).
  if (baseline.spread.size() == baseline.values.size()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isfinite(baseline.spread[i].value)) values[i]["spread"] = baseline.spread[i].value;
    }
  }
  json changes = json::array();
  for (const HostChange& c : baseline.changes) {
    changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}, {"unix_seconds", c.unix_seconds}});
  }
  json state = {{"format", kFormatVersion},
                {"baseline",
                 {{"fingerprint", baseline.fingerprint},
                  {"settings", baseline.settings},
                  {"created", baseline.created},
                  {"topology", baseline.topology},
                  {"facts", baseline.facts},
                  {"changes", std::move(changes)},
                  {"complete", baseline.complete},
                  {"values", std::move(values)}}}};
  if (baseline.memory_errors) {
    state["baseline"]["memory_errors"] = {{"corrected", baseline.memory_errors->corrected},
                                          {"uncorrected", baseline.memory_errors->uncorrected}};
  }
  return JsonText(state) + "\n";
}

std::string FormatMarker(const std::string& marker) {
  const json state = {{"format", kFormatVersion}, {"marker", marker}};
  return JsonText(state) + "\n";
}

}  // namespace numaprobe::daemon
