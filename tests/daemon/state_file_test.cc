// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/results/state_file.cc: format 2 round trips
// everything a restart must not lose; format 1 (the release before) is read
// and converted; defects are named; operators' requests.
#include "daemon/serve/results/state_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/kinds/kinds.h"

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;

SeriesKey Latency(int cpu_node, int mem_node) { return SeriesKey{"latency", -1, cpu_node, mem_node, ""}; }
SeriesKey Copy(int cpu, int cpu_node, int mem_node) { return SeriesKey{"bandwidth", cpu, cpu_node, mem_node, "copy"}; }
SeriesKey Peak(int cpu_node, int mem_node) { return SeriesKey{"peak_bandwidth", -1, cpu_node, mem_node, "read"}; }

StateContents Sample() {
  StateContents state;
  state.host.fingerprint = "0123456789abcdef";
  state.host.topology = "nodes=0,1;distances=10,21,21,10";
  state.host.origin = "first_start";
  state.host.since = "2026-11-01T12:00:00Z";
  state.host.facts = {{"kernel", "6.6.13-amd64"}, {"firmware", "unknown"}};
  state.host.changes = {{"kernel", "6.1.0", "6.6.13-amd64", 1700000000.5}};
  state.host.memory_errors = MemoryErrorCounts{12, 3};
  state.settings = {{"latency", "latency.loads=40000;memory.budget=335544320;memory.pages=auto"}};
  // Armed, with recent figures; recording, with two of its figures.
  state.series.emplace(Latency(0, 1),
                       SeriesHistory::Restored({1.2e-7, 1.25e-7}, {}, -1, ArmedBaseline{1.25e-7, 0.012, 1700000100, 15},
                                               std::nullopt, {1700000050, 1700000060}));
  // Recording after an accept: arms at 5 figures, the times of its figures kept.
  state.series.emplace(Copy(3, 1, 0), SeriesHistory::Restored({1.5e10}, {1.5e10, 1.6e10}, 1700000200, std::nullopt,
                                                              std::nullopt, {1700000150}, 5));
  // A peak bandwidth series, with the thread count its search found.
  state.series.emplace(Peak(1, 0),
                       SeriesHistory::Restored({9e10}, {}, -1, ArmedBaseline{9e10, 0.02, 1700000300, 3}, 12));
  state.schedule.costs.Observe(&LatencyProbe(), 0.044, true);
  state.schedule.costs.Observe(&LatencyProbe(), 0.025, false);
  state.schedule.position = RotationPosition{"00ff", 3, 14};
  state.schedule.own_cycles = {{"peak_bandwidth", 1700000400.5}};
  state.last_request = "20261101T120000Z-1";
  return state;
}

std::string Text(const StateContents& contents) {
  std::string error;
  const auto text = FormatState(contents, error);
  EXPECT_TRUE(text) << error;
  return text.value_or("");
}

TEST(StateFile, EverythingARestartNeedsRoundTrips) {
  const LoadedState state = ParseState(Text(Sample()), "state.json");
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  EXPECT_EQ(state.format, 2);
  ASSERT_TRUE(state.contents);
  const StateContents& got = *state.contents;
  EXPECT_EQ(got.host.topology, "nodes=0,1;distances=10,21,21,10");
  EXPECT_EQ(got.host.origin, "first_start");
  EXPECT_EQ(got.host.since, "2026-11-01T12:00:00Z");
  EXPECT_EQ(got.host.facts.at("kernel"), "6.6.13-amd64");
  ASSERT_EQ(got.host.changes.size(), 1u);
  EXPECT_DOUBLE_EQ(got.host.changes[0].unix_seconds, 1700000000.5);
  ASSERT_TRUE(got.host.memory_errors);
  EXPECT_EQ(got.host.memory_errors->uncorrected, 3u);
  EXPECT_EQ(got.settings, Sample().settings);
  ASSERT_EQ(got.series.size(), 3u);
  EXPECT_EQ(got.series.at(Peak(1, 0)).found_threads(), 12);
  EXPECT_FALSE(got.series.at(Latency(0, 1)).found_threads()) << "only where a search found one";
  EXPECT_EQ(got.schedule.own_cycles, Sample().schedule.own_cycles);
  const SeriesHistory& armed = got.series.at(Latency(0, 1));
  ASSERT_TRUE(armed.armed());
  EXPECT_DOUBLE_EQ(armed.armed()->value, 1.25e-7);
  EXPECT_DOUBLE_EQ(armed.armed()->spread, 0.012);
  EXPECT_EQ(armed.armed()->figures, 15);
  EXPECT_EQ(armed.recent(), (std::deque<double>{1.2e-7, 1.25e-7}));
  const SeriesHistory& recording = got.series.at(Copy(3, 1, 0));
  EXPECT_FALSE(recording.armed());
  EXPECT_EQ(recording.recording(), (std::vector<double>{1.5e10, 1.6e10}));
  EXPECT_DOUBLE_EQ(recording.recording_since_unix(), 1700000200);
  EXPECT_EQ(recording.accept_figures(), 5);
  EXPECT_EQ(recording.recent_unix(), (std::deque<double>{1700000150}));
  EXPECT_EQ(armed.recent_unix(), (std::deque<double>{1700000050, 1700000060}));
  EXPECT_EQ(got.schedule.costs.ToJson(), Sample().schedule.costs.ToJson());
  EXPECT_EQ(got.schedule.position.tasks, "00ff");
  EXPECT_EQ(got.schedule.position.round, 3);
  EXPECT_EQ(got.schedule.position.rounds, 14);
  EXPECT_EQ(got.last_request, "20261101T120000Z-1");
  EXPECT_EQ(Text(got), Text(Sample())) << "written again, the same text";
}

// A format-2 file from before the figures' times (0.2): read, its recent
// figures' times not known (0), so an accept counts none of them as measured
// since a change; a times list that does not match its figures is corrupt.
TEST(StateFile, RecentFiguresWithoutTimesAreRead) {
  nlohmann::json j = nlohmann::json::parse(Text(Sample()));
  for (auto& item : j["series"]) item.erase("recent_unix");
  const LoadedState old = ParseState(j.dump(), "state.json");
  ASSERT_EQ(old.status, LoadedState::Status::kOk) << old.error;
  EXPECT_EQ(old.contents->series.at(Latency(0, 1)).recent_unix(), (std::deque<double>{0, 0}));
  SeriesHistory history = old.contents->series.at(Latency(0, 1));
  EXPECT_FALSE(history.AcceptLevel(1700000000, 1700000500)) << "no figure known to be since the change";

  j["series"][0]["recent_unix"] = {1.0, 2.0, 3.0};  // no series here has 3 recent figures
  const LoadedState bad = ParseState(j.dump(), "state.json");
  EXPECT_EQ(bad.status, LoadedState::Status::kCorrupt);
  EXPECT_NE(bad.error.find("recent_unix"), std::string::npos) << bad.error;
}

// What the release before wrote: one complete baseline, every value an armed
// series (no recent figures); an incomplete one is no baseline at all.
TEST(StateFile, FormatOneIsReadAndConverted) {
  const LoadedState state = ParseState(R"({"format": 1, "baseline": {
      "fingerprint": "ab", "settings": "latency.loads=40000;", "created": "2026-10-01T00:00:00Z",
      "topology": "nodes=0,1;distances=10,21,21,10", "facts": {"kernel": "6.1.0"},
      "changes": [{"field": "microcode", "before": "0x1", "after": "0x2", "unix_seconds": 5}],
      "memory_errors": {"corrected": 1, "uncorrected": 0}, "complete": true, "values": [
        {"probe": "latency", "cpu": -1, "cpu_node": 0, "mem_node": 1, "op": "", "value": 1.3e-7, "spread": 0.02},
        {"probe": "bandwidth", "cpu": -1, "cpu_node": 1, "mem_node": 1, "op": "read", "value": 2e10}]}})",
                                       "state.json");
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  EXPECT_EQ(state.format, 1);
  EXPECT_EQ(state.legacy_settings, "latency.loads=40000;");
  ASSERT_TRUE(state.contents);
  EXPECT_EQ(state.contents->host.since, "2026-10-01T00:00:00Z");
  EXPECT_EQ(state.contents->host.topology, "nodes=0,1;distances=10,21,21,10");
  EXPECT_EQ(state.contents->host.changes.size(), 1u);
  ASSERT_EQ(state.contents->series.size(), 2u);
  const SeriesHistory& latency = state.contents->series.at(Latency(0, 1));
  ASSERT_TRUE(latency.armed());
  EXPECT_DOUBLE_EQ(latency.armed()->value, 1.3e-7);
  EXPECT_DOUBLE_EQ(latency.armed()->spread, 0.02);
  EXPECT_TRUE(latency.recent().empty());

  const LoadedState incomplete = ParseState(
      R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": false, "values": [
          {"probe": "latency", "cpu": -1, "cpu_node": 0, "mem_node": 0, "op": "", "value": 1}]}})",
      "state.json");
  ASSERT_EQ(incomplete.status, LoadedState::Status::kOk);
  EXPECT_TRUE(incomplete.contents->series.empty());
}

// The release before wrote neither the found threads nor the own cycles
// (same format): its files are read as they are.
TEST(StateFile, FilesWithoutTheNewerKeysAreRead) {
  std::string text = Text(Sample());
  const auto erase = [&](const std::string& from) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.erase(at, from.size());
  };
  erase(",\n      \"found_threads\": 12");
  erase("\n    \"own_cycles\": {\n      \"peak_bandwidth\": 1700000400.5\n    },");
  const LoadedState state = ParseState(text, "state.json");
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error << "\n" << text;
  EXPECT_FALSE(state.contents->series.at(Peak(1, 0)).found_threads());
  EXPECT_TRUE(state.contents->schedule.own_cycles.empty());
}

// The found threads are kept with the baseline and forgotten with it.
TEST(SeriesHistory, FoundThreadsGoWithTheBaseline) {
  SeriesHistory history;
  history.SetFoundThreads(8);
  for (int i = 0; i < 3; ++i) history.Add(1e10, 100 + i, 3);
  ASSERT_TRUE(history.armed());
  EXPECT_EQ(history.found_threads(), 8);
  history.Rerecord(200, /*forget_recent=*/false);
  EXPECT_FALSE(history.found_threads()) << "an accept, reset or change searches again";
}

TEST(StateFile, FormatOneMarkersSayResetOrAccept) {
  EXPECT_EQ(ParseState(R"({"format": 1, "marker": "accept"})", "s").legacy_marker, "accept");
  EXPECT_EQ(ParseState(R"({"format": 1})", "s").legacy_marker, "reset");
  EXPECT_EQ(ParseState(R"({"format": 1, "baseline": null})", "s").legacy_marker, "reset");
  EXPECT_EQ(ParseState(R"({"format": 1, "marker": "bogus"})", "s").status, LoadedState::Status::kCorrupt);
}

TEST(StateFile, DefectsAreCorruptAndNamed) {
  std::string good = Text(Sample());
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\x01not json at all", "line 1"},
      {"", "syntax error"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"baseline": null})", "format: missing"},
      {R"({"format": 3})", "format: unsupported 3"},
      {R"({"format": "2"})", "format: expected an integer"},
      {R"({"format": 2})", "host: missing"},
      {replaced("\"origin\"", "\"origin_\""), "host.origin: missing"},
      {replaced("\"cpu_node\": 0", "\"cpu_node\": 0.5"), "].cpu_node: expected an integer"},
      {replaced("\"value\": 1.25e-07", "\"value\": null"), "].baseline.value: expected a finite number"},
      {replaced("\"round\": 3", "\"round\": 14"), "schedule.rotation: round outside"},
      {replaced("\"visit_start\": 0.044", "\"visit_start\": -1"), "schedule.task costs.latency.visit_start"},
      {replaced("\"corrected\": 12", "\"corrected\": -1"), "host.memory_errors.corrected"},
      {replaced("\"found_threads\": 12", "\"found_threads\": 0"), "].found_threads: outside 1 .."},
      {replaced("\"found_threads\": 12", "\"found_threads\": \"all\""), "].found_threads: expected an integer"},
      {replaced("\"peak_bandwidth\": 1700000400.5", "\"peak_bandwidth\": \"x\""),
       "schedule.own_cycles.peak_bandwidth: expected a finite number"},
      {replaced("\"own_cycles\": {\n      \"peak_bandwidth\": 1700000400.5\n    }", "\"own_cycles\": []"),
       "schedule.own_cycles: expected an object"},
  };
  for (const auto& [text, names] : cases) {
    SCOPED_TRACE(text.substr(0, 60));
    const LoadedState state = ParseState(text, "/var/lib/numaprobe/state.json");
    EXPECT_EQ(state.status, LoadedState::Status::kCorrupt);
    EXPECT_THAT(state.error, HasSubstr("/var/lib/numaprobe/state.json"));
    EXPECT_THAT(state.error, HasSubstr(names));
    EXPECT_FALSE(state.contents);
  }
}

TEST(StateFile, ASeriesTwiceIsCorrupt) {
  std::string text = Text(Sample());
  const auto first = text.find("{\n      \"baseline\"");
  ASSERT_NE(first, std::string::npos) << text;
  const auto end = text.find("\n    }", first);
  const std::string item = text.substr(first, end + 6 - first);
  text.insert(end + 6, ",\n    " + item);
  EXPECT_THAT(ParseState(text, "s").error, HasSubstr("appears twice"));
}

TEST(StateFile, NonFiniteFiguresAreNotWritten) {
  StateContents state = Sample();
  state.series.emplace(Latency(1, 1),
                       SeriesHistory::Restored({std::numeric_limits<double>::infinity()}, {}, 0, std::nullopt));
  std::string error;
  EXPECT_FALSE(FormatState(state, error));
  EXPECT_THAT(error, HasSubstr("latency cpu_node=1 mem_node=1"));
}

// A string that is not UTF-8 (from firmware, say) must not make the writer
// throw: that would end the process every time the state is saved.
TEST(StateFile, TextThatIsNotUtf8IsWrittenReplaced) {
  StateContents state = Sample();
  state.host.facts = {{"firmware", "V\xff"}};
  const LoadedState loaded = ParseState(Text(state), "s");
  ASSERT_EQ(loaded.status, LoadedState::Status::kOk) << loaded.error;
  EXPECT_EQ(loaded.contents->host.facts.at("firmware"), "V\xef\xbf\xbd");  // U+FFFD
}

// A hostile file's shape is refused before a tree is built: 5 MiB of '['
// would otherwise be 5 million nested arrays (hundreds of MB, and a
// destructor recursing that deep).
TEST(StateFile, NestingAndValueCountAreBoundedBeforeParsing) {
  EXPECT_EQ(ParseState(std::string(5 * 1024 * 1024, '['), "s").error,
            "invalid state file s: arrays and objects nested deeper than the limit of 32 levels");
  std::string many = "[";
  for (int i = 0; i < 4'000'001; ++i) many += "0,";
  many.back() = ']';
  EXPECT_EQ(ParseState(many, "s").error,
            "invalid state file s: more than 4000000 JSON values, the limit for a state file");
  std::string error;
  EXPECT_FALSE(ParseRequest(std::string(100, '[') + std::string(100, ']'), "r.json", error));
  EXPECT_THAT(error, HasSubstr("nested deeper than the limit of 32 levels"));
}

TEST(StateFile, RequestsRoundTripAndBadOnesAreNamed) {
  std::string error;
  const auto request = ParseRequest(FormatRequest({"accept", "id-1"}), "r.json", error);
  ASSERT_TRUE(request) << error;
  EXPECT_EQ(request->action, "accept");
  EXPECT_EQ(request->id, "id-1");
  EXPECT_FALSE(ParseRequest(R"({"action": "forget", "id": "x"})", "r.json", error));
  EXPECT_THAT(error, HasSubstr("r.json: action: expected \"accept\" or \"reset\""));
  EXPECT_FALSE(ParseRequest("{", "r.json", error));
  EXPECT_THAT(error, HasSubstr("invalid baseline request r.json"));
}

}  // namespace
}  // namespace numaprobe::daemon
