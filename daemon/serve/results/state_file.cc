// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/state_file.h"

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

constexpr int kFormatVersion = 2;
constexpr int kLegacyFormat = 1;
// A file that claims more is not ours: bounds what a hostile or broken file
// can make the daemon allocate.
constexpr std::size_t kMaxSeries = 1'000'000;
constexpr std::size_t kMaxFigures = 1000;
constexpr std::size_t kMaxOwnCycles = 64;  // kinds on a schedule of their own
constexpr int kMaxFoundThreads = 1 << 20;  // CPUs of one node, and then some

// Before any tree is built (nlohmann's SAX interface counts without
// allocating): 16 MiB of '[' would otherwise become 8 million nested arrays,
// hundreds of MB and a recursive destructor deep enough to overflow the
// stack. A real file nests 5 levels; 4 million values hold the ~25 values a
// series takes for 160 000 series, more than a 2048-CPU host probed per CPU
// plans, and parse into at most ~64 MB, freed at once.
constexpr std::size_t kMaxValues = 4'000'000;
constexpr std::size_t kMaxDepth = 32;

class ShapeCheck {
 public:
  std::string problem;
  bool null() { return Value(); }
  bool boolean(bool) { return Value(); }
  bool number_integer(json::number_integer_t) { return Value(); }
  bool number_unsigned(json::number_unsigned_t) { return Value(); }
  bool number_float(json::number_float_t, const std::string&) { return Value(); }
  bool string(std::string&) { return Value(); }
  bool binary(json::binary_t&) { return Value(); }
  bool key(std::string&) { return true; }
  bool start_object(std::size_t) { return Enter(); }
  bool end_object() { return Leave(); }
  bool start_array(std::size_t) { return Enter(); }
  bool end_array() { return Leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // the parse that follows says what is wrong
  }

 private:
  bool Value() {
    if (++values_ <= kMaxValues) return true;
    problem = fmt::format("more than {} JSON values, the limit for a state file", kMaxValues);
    return false;
  }
  bool Enter() {
    if (!Value()) return false;
    if (++depth_ <= kMaxDepth) return true;
    problem = fmt::format("arrays and objects nested deeper than the limit of {} levels", kMaxDepth);
    return false;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  std::size_t values_ = 0;
  std::size_t depth_ = 0;
};

// The JSON document in `text`, once it is known to be within the limits.
json ParseBounded(std::string_view text) {
  ShapeCheck check;
  json::sax_parse(text, &check, json::input_format_t::json, /*strict=*/true);
  if (!check.problem.empty()) throw std::runtime_error(check.problem);
  return json::parse(text);
}

// "where.key", or "key" at the top.
std::string At(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

// Schema checks that name the offending key: nlohmann's own messages
// ("type must be string, but is number") do not say which field it was.
const json& Field(const json& object, const std::string& where, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) throw std::runtime_error(At(where, key) + ": missing");
  return *it;
}

const json& Object(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_object()) throw std::runtime_error(At(where, key) + ": expected an object");
  return v;
}

std::string StringField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_string()) throw std::runtime_error(At(where, key) + ": expected a string");
  return v.get<std::string>();
}

int IntField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  // get<int>() would silently wrap 4294967296 to 0: a CPU or node id out of
  // int range is a defect of the file, not a value to guess at.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT_MAX) ||
      (!v.is_number_unsigned() && (v.get<std::int64_t>() < INT_MIN || v.get<std::int64_t>() > INT_MAX))) {
    throw std::runtime_error(At(where, key) + ": expected an integer in int range");
  }
  return v.get<int>();
}

double NumberOf(const json& v, const std::string& what) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    throw std::runtime_error(fmt::format("{}: expected a finite number", what));
  }
  return v.get<double>();
}

double NumberField(const json& object, const std::string& where, const char* key) {
  return NumberOf(Field(object, where, key), At(where, key));
}

unsigned long long CountField(const json& object, const std::string& where, const char* key) {
  const json& v = Field(object, where, key);
  if (!v.is_number_unsigned()) throw std::runtime_error(At(where, key) + ": expected a count (0 or more)");
  return v.get<unsigned long long>();
}

const json& ArrayField(const json& object, const std::string& where, const char* key, std::size_t most) {
  const json& v = Field(object, where, key);
  if (!v.is_array()) throw std::runtime_error(At(where, key) + ": expected an array");
  if (v.size() > most) throw std::runtime_error(fmt::format("{}: more than {} entries", At(where, key), most));
  return v;
}

std::map<std::string, std::string> StringMap(const json& object, const std::string& where) {
  if (!object.is_object()) throw std::runtime_error(where + ": expected an object");
  std::map<std::string, std::string> map;
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) throw std::runtime_error(At(where, key) + ": expected a string");
    map[key] = value.get<std::string>();
  }
  return map;
}

std::vector<HostChange> ParseChanges(const json& j, const std::string& where) {
  std::vector<HostChange> changes;
  const json& list = ArrayField(j, where, "changes", kMaxFigures);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}.changes[{}]", where, i);
    const json& item = list[i];
    if (!item.is_object()) throw std::runtime_error(at + ": expected an object");
    changes.push_back({StringField(item, at, "field"), StringField(item, at, "before"), StringField(item, at, "after"),
                       NumberField(item, at, "unix_seconds")});
  }
  // A file from before the bound: keep its most recent changes.
  if (changes.size() > kMaxHostChanges) changes.erase(changes.begin(), changes.end() - kMaxHostChanges);
  return changes;
}

std::optional<MemoryErrorCounts> ParseErrors(const json& j, const std::string& where) {
  if (!j.contains("memory_errors")) return std::nullopt;
  const json& errors = Object(j, where, "memory_errors");
  const std::string at = where + ".memory_errors";
  return MemoryErrorCounts{CountField(errors, at, "corrected"), CountField(errors, at, "uncorrected")};
}

SeriesKey ParseKey(const json& item, const std::string& where) {
  return SeriesKey{StringField(item, where, "probe"), IntField(item, where, "cpu"), IntField(item, where, "cpu_node"),
                   IntField(item, where, "mem_node"), StringField(item, where, "op")};
}

std::vector<double> Figures(const json& item, const std::string& where, const char* key) {
  std::vector<double> figures;
  const json& list = ArrayField(item, where, key, kMaxFigures);
  for (std::size_t i = 0; i < list.size(); ++i)
    figures.push_back(NumberOf(list[i], fmt::format("{}[{}]", At(where, key), i)));
  return figures;
}

std::pair<SeriesKey, SeriesHistory> ParseSeries(const json& item, const std::string& where) {
  if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
  SeriesKey key = ParseKey(item, where);
  const std::vector<double> recent = Figures(item, where, "recent");
  // When each recent figure landed: absent in files written before it (then
  // not known), else one per recent figure.
  std::vector<double> recent_unix;
  if (item.contains("recent_unix")) {
    recent_unix = Figures(item, where, "recent_unix");
    if (recent_unix.size() != recent.size()) {
      throw std::runtime_error(
          fmt::format("{}: {} times in recent_unix for {} recent figures", where, recent_unix.size(), recent.size()));
    }
  }
  std::optional<ArmedBaseline> armed;
  std::vector<double> recording;
  double since = -1;
  int accept_figures = 0;
  if (item.contains("baseline")) {
    const json& b = Object(item, where, "baseline");
    const std::string at = where + ".baseline";
    armed = ArmedBaseline{NumberField(b, at, "value"), NumberField(b, at, "spread"), NumberField(b, at, "armed"),
                          IntField(b, at, "figures")};
  } else {
    recording = Figures(item, where, "recording");
    since = NumberField(item, where, "recording_since");
    if (item.contains("accept_figures")) {
      accept_figures = IntField(item, where, "accept_figures");
      if (accept_figures < 1 || accept_figures > static_cast<int>(kMaxFigures)) {
        throw std::runtime_error(fmt::format("{}.accept_figures: outside 1 .. {}", where, kMaxFigures));
      }
    }
  }
  std::optional<int> found_threads;
  if (item.contains("found_threads")) {
    found_threads = IntField(item, where, "found_threads");
    if (*found_threads < 1 || *found_threads > kMaxFoundThreads) {
      throw std::runtime_error(fmt::format("{}.found_threads: outside 1 .. {}", where, kMaxFoundThreads));
    }
  }
  return {std::move(key),
          SeriesHistory::Restored({recent.begin(), recent.end()}, std::move(recording), since, armed, found_threads,
                                  {recent_unix.begin(), recent_unix.end()}, accept_figures)};
}

ScheduleMemory ParseSchedule(const json& j) {
  ScheduleMemory schedule;
  if (auto error = TaskCostEstimate::FromJson(Field(j, "schedule", "task_costs"), schedule.costs); !error.empty()) {
    throw std::runtime_error("schedule." + error);
  }
  const json& rotation = Object(j, "schedule", "rotation");
  schedule.position.tasks = StringField(rotation, "schedule.rotation", "tasks");
  schedule.position.round = IntField(rotation, "schedule.rotation", "round");
  schedule.position.rounds = IntField(rotation, "schedule.rotation", "rounds");
  if (schedule.position.rounds < 1 || schedule.position.round < 0 ||
      schedule.position.round >= schedule.position.rounds) {
    throw std::runtime_error("schedule.rotation: round outside 0 .. rounds - 1");
  }
  // Absent before peak bandwidth had a schedule of its own (same format).
  if (j.contains("own_cycles")) {
    const json& cycles = Object(j, "schedule", "own_cycles");
    if (cycles.size() > kMaxOwnCycles) throw std::runtime_error("schedule.own_cycles: too many kinds");
    for (const auto& [kind, unix] : cycles.items()) {
      schedule.own_cycles.emplace(kind, NumberOf(unix, At("schedule.own_cycles", kind)));
    }
  }
  return schedule;
}

StateContents ParseCurrent(const json& j) {
  StateContents state;
  const json& host = Object(j, "", "host");
  state.host.fingerprint = StringField(host, "host", "fingerprint");
  state.host.topology = StringField(host, "host", "topology");
  state.host.origin = StringField(host, "host", "origin");
  state.host.since = StringField(host, "host", "since");
  state.host.facts = StringMap(Field(host, "host", "facts"), "host.facts");
  state.host.changes = ParseChanges(host, "host");
  state.host.memory_errors = ParseErrors(host, "host");
  state.settings = StringMap(Field(j, "", "settings"), "settings");
  const json& series = ArrayField(j, "", "series", kMaxSeries);
  for (std::size_t i = 0; i < series.size(); ++i) {
    auto [key, history] = ParseSeries(series[i], fmt::format("series[{}]", i));
    if (!state.series.emplace(key, std::move(history)).second) {
      throw std::runtime_error(fmt::format("series[{}]: {} appears twice", i, key.Describe()));
    }
  }
  state.schedule = ParseSchedule(Object(j, "", "schedule"));
  state.last_request = StringField(j, "", "last_request");
  return state;
}

// Format 1: one baseline, complete or not, or an operator's marker instead.
void ParseLegacy(const json& j, LoadedState& state) {
  const auto baseline = j.find("baseline");
  if (baseline == j.end() || baseline->is_null()) {
    state.legacy_marker = "reset";
    if (const auto it = j.find("marker"); it != j.end()) {
      if (!it->is_string() || (*it != "reset" && *it != "accept")) {
        throw std::runtime_error("marker: expected \"reset\" or \"accept\"");
      }
      state.legacy_marker = it->get<std::string>();
    }
    return;
  }
  const json& b = *baseline;
  if (!b.is_object()) throw std::runtime_error("baseline: expected an object");
  StateContents contents;
  contents.host.fingerprint = StringField(b, "baseline", "fingerprint");
  if (b.contains("settings")) state.legacy_settings = StringField(b, "baseline", "settings");
  contents.host.since = StringField(b, "baseline", "created");
  if (b.contains("topology")) contents.host.topology = StringField(b, "baseline", "topology");
  if (b.contains("facts")) contents.host.facts = StringMap(b["facts"], "baseline.facts");
  if (b.contains("changes")) contents.host.changes = ParseChanges(b, "baseline");
  contents.host.memory_errors = ParseErrors(b, "baseline");
  contents.host.origin = kOriginRestored;
  const json& complete = Field(b, "baseline", "complete");
  if (!complete.is_boolean()) throw std::runtime_error("baseline.complete: expected true or false");
  const json& values = ArrayField(b, "baseline", "values", kMaxSeries);
  // An incomplete format-1 baseline kept no figures worth going on from.
  if (complete.get<bool>()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::string where = fmt::format("baseline.values[{}]", i);
      const json& item = values[i];
      if (!item.is_object()) throw std::runtime_error(where + ": expected an object");
      const SeriesKey key = ParseKey(item, where);
      const double value = NumberField(item, where, "value");
      const double spread = item.contains("spread") ? NumberField(item, where, "spread") : 0;
      contents.series.emplace(key, SeriesHistory::Restored({}, {}, -1, ArmedBaseline{value, spread, 0, 0}));
    }
  }
  state.contents = std::move(contents);
}

json KeyJson(const SeriesKey& key) {
  return {
      {"probe", key.probe}, {"cpu", key.cpu}, {"cpu_node", key.cpu_node}, {"mem_node", key.mem_node}, {"op", key.op}};
}

}  // namespace

LoadedState ParseState(std::string_view text, const std::string& path) {
  LoadedState state;
  // Everything below reports through one catch: a state file is replaceable,
  // so no defect in it may take the daemon down.
  try {
    const json j = ParseBounded(text);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    const auto format = j.find("format");
    if (format == j.end()) throw std::runtime_error("format: missing");
    if (!format->is_number_integer()) throw std::runtime_error("format: expected an integer");
    state.format = static_cast<int>(std::clamp<std::int64_t>(format->get<std::int64_t>(), INT_MIN, INT_MAX));
    if (state.format == kFormatVersion) {
      state.contents = ParseCurrent(j);
    } else if (state.format == kLegacyFormat) {
      ParseLegacy(j, state);
    } else {
      throw std::runtime_error(fmt::format("format: unsupported {} (this numaprobe reads {} and {})", format->dump(),
                                           kLegacyFormat, kFormatVersion));
    }
    state.status = LoadedState::Status::kOk;
  } catch (const std::exception& e) {  // nlohmann::json::exception derives from std::exception
    state = LoadedState{};
    state.status = LoadedState::Status::kCorrupt;
    state.error = fmt::format("invalid state file {}: {}", path, e.what());
  }
  return state;
}

std::optional<std::string> FormatState(const StateContents& contents, std::string& error) {
  const auto finite = [&](double v, const SeriesKey& key, const char* what) {
    // JSON has no NaN or infinity (nlohmann would write null), and a file we
    // would later reject as corrupt must not be written in the first place.
    if (std::isfinite(v)) return true;
    error = fmt::format("the {} of {} is not finite", what, key.Describe());
    return false;
  };
  json series = json::array();
  for (const auto& [key, history] : contents.series) {
    json item = KeyJson(key);
    json recent = json::array();
    for (double v : history.recent()) {
      if (!finite(v, key, "recent figure")) return std::nullopt;
      recent.push_back(v);
    }
    item["recent"] = std::move(recent);
    json recent_unix = json::array();
    for (double t : history.recent_unix()) {
      if (!finite(t, key, "recent figure's time")) return std::nullopt;
      recent_unix.push_back(t);
    }
    item["recent_unix"] = std::move(recent_unix);
    if (const auto& armed = history.armed()) {
      if (!finite(armed->value, key, "baseline") || !finite(armed->spread, key, "baseline spread")) return std::nullopt;
      item["baseline"] = {{"value", armed->value},
                          {"spread", armed->spread},
                          {"armed", armed->armed_unix},
                          {"figures", armed->figures}};
    } else {
      json recording = json::array();
      for (double v : history.recording()) {
        if (!finite(v, key, "recorded figure")) return std::nullopt;
        recording.push_back(v);
      }
      item["recording"] = std::move(recording);
      item["recording_since"] = history.recording_since_unix();
      if (history.accept_figures() > 0) item["accept_figures"] = history.accept_figures();
    }
    if (history.found_threads()) item["found_threads"] = *history.found_threads();
    series.push_back(std::move(item));
  }
  json changes = json::array();
  for (const HostChange& c : contents.host.changes) {
    changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}, {"unix_seconds", c.unix_seconds}});
  }
  json host = {{"fingerprint", contents.host.fingerprint},
               {"topology", contents.host.topology},
               {"origin", contents.host.origin},
               {"since", contents.host.since},
               {"facts", contents.host.facts},
               {"changes", std::move(changes)}};
  if (contents.host.memory_errors) {
    host["memory_errors"] = {{"corrected", contents.host.memory_errors->corrected},
                             {"uncorrected", contents.host.memory_errors->uncorrected}};
  }
  const RotationPosition& p = contents.schedule.position;
  json state = {{"format", kFormatVersion},
                {"host", std::move(host)},
                {"settings", contents.settings},
                {"schedule",
                 {{"task_costs", contents.schedule.costs.ToJson()},
                  {"rotation", {{"tasks", p.tasks}, {"round", p.round}, {"rounds", p.rounds}}},
                  {"own_cycles", contents.schedule.own_cycles}}},
                {"last_request", contents.last_request},
                {"series", std::move(series)}};
  return JsonText(state) + "\n";
}

std::optional<OperatorRequest> ParseRequest(std::string_view text, const std::string& path, std::string& error) {
  try {
    const json j = ParseBounded(text);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    OperatorRequest request{StringField(j, "", "action"), StringField(j, "", "id")};
    if (request.action != "accept" && request.action != "reset") {
      throw std::runtime_error("action: expected \"accept\" or \"reset\"");
    }
    return request;
  } catch (const std::exception& e) {
    error = fmt::format("invalid baseline request {}: {}", path, e.what());
    return std::nullopt;
  }
}

std::string FormatRequest(const OperatorRequest& request) {
  return JsonText(json{{"action", request.action}, {"id", request.id}}) + "\n";
}

}  // namespace numaprobe::daemon
