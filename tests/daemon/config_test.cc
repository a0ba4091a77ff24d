// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/config.cc (and the schema walk in daemon/config_reader.cc)
#include "daemon/config/config.h"
#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/probe_settings.h"
#include "daemon/probing/probe_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <utility>

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::SizeIs;

}  // namespace

// Lets gtest print errors as the operator would see them.
void PrintTo(const ConfigError& error, std::ostream* out) { *out << error.ToString(); }

namespace {

// NUMAPROBE_FIXTURES is <source>/tests/fixtures.
std::filesystem::path SourceRoot() { return std::filesystem::path(NUMAPROBE_FIXTURES).parent_path().parent_path(); }

std::filesystem::path ConfigFixture(const std::string& name) {
  return std::filesystem::path(NUMAPROBE_FIXTURES) / "config" / name;
}

Config Parsed(const std::string& yaml) {
  ConfigResult result = ParseConfig(yaml, ProbeTableSections());
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
    for (const ConfigError& e : *errors) ADD_FAILURE() << e.ToString();
    return Config{};
  }
  return std::get<Config>(result);
}

std::vector<ConfigError> Errors(const ConfigResult& result) {
  if (std::holds_alternative<Config>(result)) {
    ADD_FAILURE() << "config was accepted";
    return {};
  }
  return std::get<std::vector<ConfigError>>(result);
}
std::vector<ConfigError> Errors(const std::string& yaml) { return Errors(ParseConfig(yaml, ProbeTableSections())); }

auto Error(const std::string& key, int line, const std::string& text) {
  return AllOf(Field(&ConfigError::key, key), Field(&ConfigError::line, line),
               Field(&ConfigError::message, HasSubstr(text)));
}

// Field by field: Config has no operator==, and a failure should name the field.
void ExpectSame(const Config& a, const Config& b) {
#define SAME(field) EXPECT_EQ(a.field, b.field) << #field
  SAME(probes.Of<LatencyConfig>().enabled);
  SAME(probes.Of<LatencyConfig>().stride_bytes);
  SAME(probes.Of<LatencyConfig>().buffer_bytes);
  SAME(probes.Of<LatencyConfig>().samples);
  SAME(probes.Of<LatencyConfig>().loads_per_sample);
  SAME(probes.Of<BandwidthConfig>().enabled);
  SAME(probes.Of<BandwidthConfig>().ops);
  SAME(probes.Of<BandwidthConfig>().threads);
  SAME(probes.Of<BandwidthConfig>().buffer_bytes);
  SAME(probes.Of<BandwidthConfig>().burst_bytes);
  SAME(probes.Of<BandwidthConfig>().bursts);
  SAME(probes.Of<CoreToCoreConfig>().enabled);
  SAME(probes.Of<CoreToCoreConfig>().samples);
  SAME(probes.Of<CoreToCoreConfig>().round_trips);
  SAME(probes.Of<CoreToCoreConfig>().run_timeout_ms);
  SAME(probes.Of<LoadedLatencyConfig>().enabled);
  SAME(probes.Of<LoadedLatencyConfig>().traffic);
  SAME(probes.Of<LoadedLatencyConfig>().load_threads);
  SAME(probes.Of<LoadedLatencyConfig>().samples);
  SAME(probes.Of<LoadedLatencyConfig>().loads_per_sample);
  SAME(targets.cpus);
  SAME(targets.mem_nodes);
  SAME(targets.per_cpu);
  SAME(targets.kind_cpus);
  SAME(schedule.duty_cycle);
  SAME(schedule.interval);
  SAME(schedule.jitter);
  SAME(schedule.priority);
  SAME(memory.budget_bytes);
  SAME(memory.pages);
  SAME(baseline.rounds);
  SAME(state_directory);
#undef SAME
}

TEST(ParseConfig, DocumentedDefaultFileIsExactlyTheDefaults) {
  const ConfigResult result =
      LoadConfigFile((SourceRoot() / "docs/numaprobe.reference.yaml").string(), ProbeTableSections());
  ASSERT_TRUE(std::holds_alternative<Config>(result)) << ::testing::PrintToString(Errors(result));
  ExpectSame(std::get<Config>(result), Config{});
}

TEST(ParseConfig, EmptyDocumentsMeanDefaults) {
  for (const char* text : {"", "\n", "# nothing but a comment\n", "---\n", "probes:\ntargets:\n"}) {
    SCOPED_TRACE(text);
    ExpectSame(Parsed(text), Config{});
  }
}

TEST(ParseConfig, EveryKeyNonDefault) {
  const Config c = Parsed(R"(
probes:
  latency: {enabled: false, stride_bytes: 256, buffer_size: 64MiB, samples: 9, loads_per_sample: 100000}
  bandwidth:
    enabled: true
    ops: [copy, read]
    threads: 2
    buffer_size: 1GiB
    burst_size: 16MiB
    bursts: 3
  core_to_core: {enabled: false, samples: 11, round_trips: 500}
targets:
  cpus: "0-3,8"
  mem_nodes: [1, 0]
  per_cpu: true
  c2c_cpus: [4, 2, 2]
schedule: {duty_cycle: 0.05, interval: 1h30m, jitter: 0, priority: nice19}
memory: {budget: 2GiB, pages: 4k}
baseline: {rounds: 5}
state_directory: /srv/numaprobe
node_feature_directory: /etc/kubernetes/node-feature-discovery/features.d
)");
  EXPECT_FALSE(c.probes.Of<LatencyConfig>().enabled);
  EXPECT_EQ(c.probes.Of<LatencyConfig>().stride_bytes, 256u);
  EXPECT_EQ(c.probes.Of<LatencyConfig>().buffer_bytes, 64u << 20);
  EXPECT_EQ(c.probes.Of<LatencyConfig>().samples, 9);
  EXPECT_EQ(c.probes.Of<LatencyConfig>().loads_per_sample, 100'000u);
  EXPECT_TRUE(c.probes.Of<BandwidthConfig>().enabled);
  EXPECT_EQ(c.probes.Of<BandwidthConfig>().ops, (std::vector{k::BandwidthOp::kCopy, k::BandwidthOp::kRead}));
  EXPECT_EQ(c.probes.Of<BandwidthConfig>().threads, 2);
  EXPECT_EQ(c.probes.Of<BandwidthConfig>().buffer_bytes, 1u << 30);
  EXPECT_EQ(c.probes.Of<BandwidthConfig>().burst_bytes, 16u << 20);
  EXPECT_EQ(c.probes.Of<BandwidthConfig>().bursts, 3);
  EXPECT_FALSE(c.probes.Of<CoreToCoreConfig>().enabled);
  EXPECT_EQ(c.probes.Of<CoreToCoreConfig>().samples, 11);
  EXPECT_EQ(c.probes.Of<CoreToCoreConfig>().round_trips, 500);
  EXPECT_EQ(c.targets.cpus, (std::vector{0, 1, 2, 3, 8}));
  EXPECT_EQ(c.targets.mem_nodes, (std::vector{0, 1}));
  EXPECT_TRUE(c.targets.per_cpu);
  EXPECT_EQ(c.targets.KindCpus("c2c_cpus"), (std::vector{2, 4}));
  EXPECT_DOUBLE_EQ(c.schedule.duty_cycle, 0.05);
  EXPECT_EQ(c.schedule.interval, milliseconds(5'400'000));
  EXPECT_DOUBLE_EQ(c.schedule.jitter, 0.0);
  EXPECT_EQ(c.schedule.priority, ProbePriority::kNice19);
  EXPECT_EQ(c.memory.budget_bytes, 2u << 30);
  EXPECT_EQ(c.memory.pages, k::PagePolicy::kSmall);
  EXPECT_EQ(c.baseline.rounds, 5);
  EXPECT_EQ(c.state_directory, "/srv/numaprobe");
  EXPECT_EQ(c.node_feature_directory, "/etc/kubernetes/node-feature-discovery/features.d");
}

TEST(ParseConfig, LoadedLatencySectionIsCheckedLikeEveryOther) {
  const Config c = Parsed(
      "probes:\n  loaded_latency:\n    enabled: true\n    traffic: [read2-ntwrite1]\n    load_threads: 3\n"
      "    samples: 9\n    loads_per_sample: 20000\n");
  EXPECT_TRUE(c.probes.Of<LoadedLatencyConfig>().enabled);
  EXPECT_EQ(c.probes.Of<LoadedLatencyConfig>().traffic, std::vector<std::string>{"read2-ntwrite1"});
  EXPECT_EQ(c.probes.Of<LoadedLatencyConfig>().load_threads, 3);
  EXPECT_EQ(c.probes.Of<LoadedLatencyConfig>().samples, 9);
  EXPECT_EQ(c.probes.Of<LoadedLatencyConfig>().loads_per_sample, 20000u);
  EXPECT_FALSE(Config{}.probes.Of<LoadedLatencyConfig>().enabled) << "on demand unless enabled";
  EXPECT_THAT(Errors("probes:\n  loaded_latency:\n    traffic: [write]\n    load_threads: -2\n    delay: 5\n"),
              ElementsAre(Error("probes.loaded_latency.traffic", 3, "expected one of read, read2-ntwrite1"),
                          Error("probes.loaded_latency.load_threads", 4, "out of range"),
                          Error("probes.loaded_latency.delay", 5, "")));
}

TEST(ParseConfig, UnknownKeysAtEveryLevelWithSuggestions) {
  const auto errors = Errors("probes:\n  latency:\n    strid: 256\nschedul:\n  interval: 5m\n");
  EXPECT_THAT(errors, Contains(Error("probes.latency.strid", 3, "unknown key (did you mean stride_bytes?)")));
  EXPECT_THAT(errors, Contains(Error("schedul", 4, "did you mean schedule?")));
  EXPECT_EQ(errors.front().ToString(), "line 3: probes.latency.strid: unknown key (did you mean stride_bytes?)");
  EXPECT_THAT(Errors("probes:\n  colour: red\n"), Contains(Error("probes.colour", 2, "unknown key")));
}

TEST(ParseConfig, WrongTypesNameKeyAndLine) {
  EXPECT_THAT(Errors("schedule:\n  jitter: 0.1\n  duty_cycle: lots\n"),
              Contains(Error("schedule.duty_cycle", 3, "expected a number, got 'lots'")));
  EXPECT_THAT(Errors("probes:\n  latency:\n    samples: 7.5\n"),
              Contains(Error("probes.latency.samples", 3, "expected an integer, got '7.5'")));
  EXPECT_THAT(Errors("probes:\n  latency:\n    enabled: yes\n"),
              Contains(Error("probes.latency.enabled", 3, "expected true or false, got 'yes'")));
  EXPECT_THAT(Errors("probes:\n  bandwidth:\n    ops: read\n"),
              Contains(Error("probes.bandwidth.ops", 3, "expected a list such as [read, write, copy], got 'read'")));
  EXPECT_THAT(Errors("probes:\n  bandwidth:\n    ops: [read, fill]\n"),
              Contains(Error("probes.bandwidth.ops", 3, "got 'fill'")));
  EXPECT_THAT(Errors("schedule:\n  interval: [5m]\n"), Contains(Error("schedule.interval", 2, "got a list")));
  EXPECT_THAT(Errors("schedule:\n  priority:\n"), Contains(Error("schedule.priority", 2, "got nothing")));
  EXPECT_THAT(Errors("schedule:\n  priority: realtime\n"),
              Contains(Error("schedule.priority", 2, "expected one of idle, nice19, got 'realtime'")));
  EXPECT_THAT(Errors("memory:\n  pages: 1g\n"), Contains(Error("memory.pages", 2, "auto, hugetlb, thp, 4k")));
  EXPECT_THAT(Errors("probes: [latency]\n"), Contains(Error("probes", 1, "expected a mapping, got a list")));
  EXPECT_THAT(Errors("state_directory: {a: 1}\n"), Contains(Error("state_directory", 1, "expected a string")));
}

TEST(ParseConfig, BadSizesDurationsAndCpuLists) {
  EXPECT_THAT(Errors("memory:\n  budget: 1.5GiB\n"), Contains(Error("memory.budget", 2, "expected a size")));
  EXPECT_THAT(Errors("memory:\n  budget: 2G\n"), Contains(Error("memory.budget", 2, "'2G'")));
  EXPECT_THAT(Errors("schedule:\n  interval: 300\n"), Contains(Error("schedule.interval", 2, "expected a duration")));
  EXPECT_THAT(Errors("schedule:\n  interval: 30m1h\n"), Contains(Error("schedule.interval", 2, "must decrease")));
  EXPECT_THAT(Errors("targets:\n  cpus: \"0-3,x\"\n"), Contains(Error("targets.cpus", 2, "'x'")));
  EXPECT_THAT(Errors("targets:\n  cpus: \"3-1\"\n"), Contains(Error("targets.cpus", 2, "'3-1'")));
  EXPECT_THAT(Errors("targets:\n  mem_nodes:\n    - 0\n    - -1\n"),
              Contains(Error("targets.mem_nodes", 4, "expected an id in [0, 65535], got '-1'")));
  EXPECT_THAT(Errors("targets:\n  c2c_cpus: [3]\n"), Contains(Error("targets.c2c_cpus", 2, "at least two")));
}

struct RangeCase {
  const char* yaml;
  const char* key;
  const char* message;
};

TEST(ParseConfig, EveryNumericKeyIsRangeChecked) {
  const RangeCase cases[] = {
      {"probes:\n  latency:\n    stride_bytes: 32\n", "probes.latency.stride_bytes", "32 is out of range [64, 4096]"},
      {"probes:\n  latency:\n    stride_bytes: 100\n", "probes.latency.stride_bytes", "not a power of two"},
      {"probes:\n  latency:\n    buffer_size: 64KiB\n", "probes.latency.buffer_size", "at least 1MiB"},
      {"probes:\n  latency:\n    samples: 0\n", "probes.latency.samples", "0 is out of range [1, 100]"},
      {"probes:\n  latency:\n    loads_per_sample: 999\n", "probes.latency.loads_per_sample", "[1000, 10000000]"},
      {"probes:\n  bandwidth:\n    threads: 1025\n", "probes.bandwidth.threads", "1025 is out of range [1, 1024]"},
      {"probes:\n  bandwidth:\n    burst_size: 32KiB\n", "probes.bandwidth.burst_size", "[64KiB, 64TiB]"},
      {"probes:\n  bandwidth:\n    burst_size: 65540\n", "probes.bandwidth.burst_size", "multiple of 64"},
      {"probes:\n  bandwidth:\n    bursts: 1001\n", "probes.bandwidth.bursts", "[1, 1000]"},
      {"probes:\n  bandwidth:\n    ops: []\n", "probes.bandwidth.ops", "must not be empty"},
      {"probes:\n  bandwidth:\n    ops: [read, read]\n", "probes.bandwidth.ops", "'read' is listed twice"},
      {"probes:\n  bandwidth:\n    buffer_size: 96MiB\n", "probes.bandwidth.buffer_size",
       "at least 4 x burst_size x threads = 128MiB"},
      {"probes:\n  bandwidth:\n    threads: 4\n", "probes.bandwidth.threads", "= 512MiB"},
      {"probes:\n  core_to_core:\n    samples: 101\n", "probes.core_to_core.samples", "[1, 100]"},
      {"probes:\n  core_to_core:\n    round_trips: 5\n", "probes.core_to_core.round_trips", "[10, 100000]"},
      {"probes:\n  core_to_core:\n    run_timeout_ms: 99\n", "probes.core_to_core.run_timeout_ms", "[100, 600000]"},
      {"schedule:\n  duty_cycle: 0.9\n", "schedule.duty_cycle", "0.9 is out of range [0.00001, 0.5]"},
      {"schedule:\n  duty_cycle: 0\n", "schedule.duty_cycle", "0 is out of range [0.00001, 0.5]"},
      // Tiny budgets made the pause cost / ratio overflow (daemon/budget.cc).
      {"schedule:\n  duty_cycle: 1e-300\n", "schedule.duty_cycle", "1e-300 is out of range [0.00001, 0.5]"},
      {"schedule:\n  duty_cycle: 0.0000099\n", "schedule.duty_cycle", "[0.00001, 0.5]"},
      {"schedule:\n  interval: 500ms\n", "schedule.interval", "500ms is out of range [1s, 24h]"},
      {"schedule:\n  interval: 25h\n", "schedule.interval", "[1s, 24h]"},
      {"schedule:\n  jitter: 1.5\n", "schedule.jitter", "1.5 is out of range [0, 0.9]"},
      {"schedule:\n  jitter: -0.1\n", "schedule.jitter", "[0, 0.9]"},
      {"memory:\n  budget: 8MiB\n", "memory.budget", "8MiB is out of range [16MiB, 64TiB]"},
      {"baseline:\n  rounds: 0\n", "baseline.rounds", "[1, 100]"},
      {"state_directory: var/lib/numaprobe\n", "state_directory", "not an absolute path"},
      {"node_feature_directory: features.d\n", "node_feature_directory", "not an absolute path"},
  };
  for (const RangeCase& c : cases) {
    SCOPED_TRACE(c.yaml);
    // The offending key is on each case's last line.
    const std::string_view yaml = c.yaml;
    const int line = static_cast<int>(std::count(yaml.begin(), yaml.end(), '\n'));
    EXPECT_THAT(Errors(c.yaml), ElementsAre(Error(c.key, line, c.message)));
  }
}

// config/ knows no kind: a section it is handed is read, checked against the
// budget and kept as the section's own type, and nothing else is a kind.
struct DemoSectionValues {
  bool enabled = true;
  std::size_t buffer_bytes = 1u << 20;
  bool operator==(const DemoSectionValues&) const = default;
};
class DemoSection final : public KindSection {
 public:
  std::string_view name() const override { return "demo"; }
  std::vector<std::string_view> ConfigKeys() const override { return {"enabled", "buffer_size"}; }
  void ReadConfig(SectionKeys& section, TypedValues& probes) const override {
    auto& values = probes.Of<DemoSectionValues>();
    section.Bool("enabled", values.enabled);
    section.Size("buffer_size", 0, 1u << 30, values.buffer_bytes);
  }
  bool Enabled(const Config& config) const override { return config.probes.Of<DemoSectionValues>().enabled; }
  std::vector<ConfiguredBuffer> ConfiguredBuffers(const Config& config) const override {
    return {{"buffer_size", config.probes.Of<DemoSectionValues>().buffer_bytes}};
  }
};

TEST(ParseConfig, KindSectionsAreTheOnesTheCallerHandsIn) {
  const DemoSection demo;
  const KindSections sections{&demo};
  const ConfigResult parsed = ParseConfig("probes:\n  demo:\n    buffer_size: 64MiB\n", sections);
  ASSERT_TRUE(std::holds_alternative<Config>(parsed));
  EXPECT_EQ(std::get<Config>(parsed).probes.Of<DemoSectionValues>().buffer_bytes, 64u << 20);
  EXPECT_FALSE(std::get<Config>(parsed) == Config{});
  EXPECT_TRUE(std::get<Config>(ParseConfig("probes:\n  demo: {}\n", sections)) == Config{})
      << "a section left at its defaults equals no section";

  EXPECT_THAT(Errors(
                  ParseConfig("probes:\n  demo:\n    buffer_size: 1GiB\n    buffer_siz: 1\nmemory:\n  budget: 512MiB\n",
                              sections)),
              ElementsAre(Error("probes.demo.buffer_size", 3, "1GiB is larger than memory.budget (512MiB)"),
                          Error("probes.demo.buffer_siz", 4, "unknown key (did you mean buffer_size?)")));
  EXPECT_THAT(Errors(ParseConfig("probes:\n  latency: {}\n", sections)),
              ElementsAre(Error("probes.latency", 2, "unknown key")));
  EXPECT_THAT(Errors(ParseConfig("probes:\n  demo: {enabled: false}\n", sections)),
              ElementsAre(Error("probes", 1, "every probe is disabled")));
}

TEST(ParseConfig, CrossFieldRules) {
  EXPECT_THAT(Errors("probes:\n  latency: {enabled: false}\n  bandwidth: {enabled: false}\n"
                     "  core_to_core: {enabled: false}\n"),
              Contains(Error("probes", 1, "every probe is disabled")));
  EXPECT_THAT(Errors("memory:\n  budget: 128MiB\n"),
              Contains(Error("probes.bandwidth.buffer_size", 2, "larger than memory.budget (128MiB)")));
  // Copy splits its burst between its sides, so 4 bursts is the minimum with any ops.
  Parsed("probes:\n  bandwidth: {buffer_size: 128MiB}\nmemory: {budget: 128MiB}\n");
  // A bad input to a rule yields one error, not a second one from the rule.
  EXPECT_THAT(Errors("probes:\n  bandwidth: {threads: many}\n"), SizeIs(1));
}

TEST(ParseConfig, SyntaxErrorsCarryTheLine) {
  const auto errors = Errors(LoadConfigFile(ConfigFixture("bad_syntax.yaml").string(), ProbeTableSections()));
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_GE(errors[0].line, 4);
  EXPECT_THAT(errors[0].message, HasSubstr("invalid YAML"));
  EXPECT_THAT(Errors("a: {b: 1\nc: 2\n"), Contains(Field(&ConfigError::line, ::testing::Ge(2))));
  EXPECT_THAT(Errors("probes: 1\n---\nprobes: 2\n"), Contains(Error("", 0, "one YAML document")));
  EXPECT_THAT(Errors("just a string\n"), Contains(Error("", 1, "expected a mapping, got 'just a string'")));
  EXPECT_THAT(Errors("schedule:\n  jitter: 0.1\n  jitter: 0.2\n"),
              Contains(Error("schedule.jitter", 3, "duplicate key (first set on line 2)")));
}

// yaml-cpp refused nesting past 500 levels with the words "bad file", and
// built ~500 bytes a node: a 1 MiB "cpus: [1,1,...]" cost 266 MB for good.
// Both limits are checked while scanning, before a tree is built, and named.
TEST(ParseConfig, NestingAndNodeLimitsAreNamed) {
  EXPECT_THAT(Errors("probes: " + std::string(600, '[') + std::string(600, ']') + "\n"),
              ElementsAre(Error("", 1, "lists and mappings nested deeper than the limit of 64 levels")));
  std::string nested;
  for (int i = 0; i < 70; ++i) nested += std::string(2 * i, ' ') + "k:\n";
  EXPECT_THAT(Errors(nested), ElementsAre(Error("", 65, "nested deeper than the limit of 64 levels")));
  std::string cpus = "targets:\n  cpus: [";
  for (int i = 0; i < 500'000; ++i) cpus += "1,";
  cpus += "1]\n";
  EXPECT_THAT(Errors(cpus),
              ElementsAre(Error("", 2,
                                "more than 32768 YAML nodes (values, lists and mappings), the limit for a "
                                "configuration file")));
  // Within the limit, a long list is a valid config.
  std::string fine = "targets:\n  cpus: [";
  for (int i = 0; i < 30'000; ++i) fine += "0,";
  fine += "0]\n";
  EXPECT_TRUE(std::holds_alternative<Config>(ParseConfig(fine, ProbeTableSections())));
}

// A file of 10,000 unknown keys gave 10,000 log lines on every SIGHUP: the
// first kMaxConfigErrors are kept, and one more line counts the rest.
TEST(ParseConfig, ErrorsAreCappedWithACountOfTheRest) {
  std::string unknown;
  for (int i = 0; i < 10'000; ++i) unknown += "unknown_" + std::to_string(i) + ": 1\n";
  const std::vector<ConfigError> errors = Errors(unknown);
  ASSERT_EQ(errors.size(), 51u);
  EXPECT_EQ(errors[0].ToString(), "line 1: unknown_0: unknown key");
  EXPECT_EQ(errors.back().ToString(), "9950 more errors not listed (only the first 50 are)");
}

TEST(ParseConfig, FixturesReportEveryErrorWithKeyAndLine) {
  auto unknown = Errors(LoadConfigFile(ConfigFixture("bad_unknown_key.yaml").string(), ProbeTableSections()));
  EXPECT_THAT(unknown, Contains(Error("probes.latency.strid", 4, "did you mean stride_bytes?")));
  EXPECT_THAT(unknown, Contains(Error("schedul", 6, "unknown key")));

  auto types = Errors(LoadConfigFile(ConfigFixture("bad_types.yaml").string(), ProbeTableSections()));
  EXPECT_THAT(types, SizeIs(7));
  EXPECT_THAT(types, Contains(Error("schedule.duty_cycle", 9, "expected a number, got 'lots'")));
  EXPECT_THAT(types, Contains(Error("targets.cpus", 14, "'x'")));

  auto range = Errors(LoadConfigFile(ConfigFixture("bad_range.yaml").string(), ProbeTableSections()));
  EXPECT_THAT(range, SizeIs(8));
  EXPECT_THAT(range, Contains(Error("schedule.duty_cycle", 9, "0.9 is out of range [0.00001, 0.5]")));
  EXPECT_THAT(range, Contains(Error("baseline.rounds", 15, "101 is out of range [1, 100]")));
}

TEST(LoadConfigFile, UnreadableFileIsOneErrorNamingThePath) {
  const auto errors = Errors(LoadConfigFile("/nonexistent/numaprobe.yaml", ProbeTableSections()));
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_EQ(errors[0].ToString(), "cannot read /nonexistent/numaprobe.yaml: No such file or directory");
  // A directory opens fine and must not read as an empty (valid) config.
  EXPECT_THAT(Errors(LoadConfigFile(SourceRoot().string(), ProbeTableSections())),
              ElementsAre(
                  Error("", 0, "cannot read " + SourceRoot().string() + ": it is a directory, not a regular file")));
  // No device either: /dev/zero grew the text until std::bad_alloc aborted the
  // process (tests/integration/test_serve.py runs that one with check-config);
  // /dev/null read as an empty, valid config.
  EXPECT_THAT(Errors(LoadConfigFile("/dev/null", ProbeTableSections())),
              ElementsAre(Error("", 0, "cannot read /dev/null: it is a character device, not a regular file")));
}

TEST(ParseConfig, SmallestDutyCycleIsAccepted) {
  EXPECT_DOUBLE_EQ(Parsed("schedule: {duty_cycle: 0.00001}\n").schedule.duty_cycle, 0.00001);
  EXPECT_DOUBLE_EQ(Parsed("schedule: {duty_cycle: 1e-5}\n").schedule.duty_cycle, 0.00001);
}

// schedule.learning_duty_cycle: auto (0) is 90% of the smaller of 1% of one
// CPU and 0.01% of the host's CPUs, never below duty_cycle; or a share.
TEST(ParseConfig, LearningDutyCycleIsAutoOrAShareNeverBelowTheBudget) {
  const Config automatic = Parsed("schedule: {learning_duty_cycle: auto}\n");
  EXPECT_EQ(automatic.schedule.learning_duty_cycle, 0);
  EXPECT_DOUBLE_EQ(LearningDutyCycle(automatic, 64), 0.9 * 0.0064);
  EXPECT_DOUBLE_EQ(LearningDutyCycle(automatic, 512), 0.9 * 0.01) << "1% of one CPU at most";
  EXPECT_DOUBLE_EQ(LearningDutyCycle(automatic, 8), 0.002) << "never below duty_cycle";
  EXPECT_DOUBLE_EQ(LearningDutyCycle(Parsed("schedule: {learning_duty_cycle: 0.004}\n"), 8), 0.004);
  EXPECT_DOUBLE_EQ(LearningDutyCycle(Parsed("schedule: {learning_duty_cycle: 0.001}\n"), 512), 0.002);
  EXPECT_THAT(Errors("schedule: {learning_duty_cycle: fast}\n"),
              ElementsAre(Field(&ConfigError::key, "schedule.learning_duty_cycle")));
  EXPECT_THAT(Errors("schedule: {learning_duty_cycle: 0.9}\n"),
              ElementsAre(Field(&ConfigError::key, "schedule.learning_duty_cycle")));
}

TEST(ParseConfig, AcceptChangesAreFieldEqualsValue) {
  EXPECT_EQ(Parsed("baseline: {accept_changes: [\"kernel=6.6.13-amd64\", \"firmware=*\"]}\n").baseline.accept_changes,
            (std::vector<std::string>{"kernel=6.6.13-amd64", "firmware=*"}));
  EXPECT_TRUE(Parsed("baseline: {accept_changes: []}\n").baseline.accept_changes.empty());
  for (const char* bad : {"baseline: {accept_changes: [kernel]}\n", "baseline: {accept_changes: [\"=x\"]}\n",
                          "baseline: {accept_changes: [\"kernel=\"]}\n", "baseline: {accept_changes: kernel=1}\n",
                          "baseline: {accept_changes: [[a]]}\n"}) {
    EXPECT_THAT(Errors(bad), ElementsAre(Field(&ConfigError::key, "baseline.accept_changes"))) << bad;
  }
}

class LoadConfigFileInDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::path(::testing::TempDir()) / "numaprobe_config_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

// Opening a FIFO blocks until a writer appears: check-config hung, and so
// would the daemon's SIGHUP reload.
TEST_F(LoadConfigFileInDir, FifoIsRefusedPromptly) {
  const std::string fifo = (dir_ / "numaprobe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto loading = std::async(std::launch::async, [&fifo] { return LoadConfigFile(fifo, ProbeTableSections()); });
  if (loading.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    // Unblock the hung open (a writer arrives and leaves) so the test fails rather than hangs.
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) ::close(writer);
    loading.wait();
    FAIL() << "LoadConfigFile blocked on a FIFO";
  }
  EXPECT_THAT(Errors(loading.get()),
              ElementsAre(Error("", 0, "cannot read " + fifo + ": it is a FIFO, not a regular file")));
}

TEST_F(LoadConfigFileInDir, FilesLargerThanOneMebibyteAreRefused) {
  const std::string path = (dir_ / "numaprobe.yaml").string();
  const auto write_comment = [&path](std::size_t bytes) {  // one valid YAML comment line
    std::ofstream out(path, std::ios::trunc);
    out << '#' << std::string(bytes - 2, ' ') << '\n';
  };
  write_comment(1 << 20);
  EXPECT_TRUE(std::holds_alternative<Config>(LoadConfigFile(path, ProbeTableSections())));  // exactly 1 MiB: still read
  write_comment((1 << 20) + 1);
  EXPECT_THAT(Errors(LoadConfigFile(path, ProbeTableSections())),
              ElementsAre(Error("", 0, "cannot read " + path + ": it is larger than the 1 MiB limit")));
}

TEST(SettingsFrom, MapConfigOntoKernelSpecs) {
  const Config c = Parsed(R"(
probes:
  latency: {stride_bytes: 256, buffer_size: 64MiB, samples: 9, loads_per_sample: 100000}
  bandwidth: {ops: [write], threads: 2, buffer_size: 512MiB, burst_size: 16MiB, bursts: 3}
  core_to_core: {samples: 11, round_trips: 500, run_timeout_ms: 30000}
memory: {budget: 2GiB, pages: hugetlb}
)");
  const ProbeSettings probe = ProbeSettingsFrom(c);
  const auto& latency = probe.Of<LatencySettings>();
  EXPECT_EQ(latency.spec.samples, 9);
  EXPECT_EQ(latency.spec.loads_per_sample, 100'000u);
  EXPECT_EQ(latency.buffer_bytes, 64u << 20);
  EXPECT_EQ(latency.stride, 256u);
  const auto& bandwidth = probe.Of<BandwidthSettings>();
  EXPECT_EQ(bandwidth.spec.burst_bytes, 16u << 20);
  EXPECT_EQ(bandwidth.spec.bursts, 3);
  EXPECT_EQ(bandwidth.threads, 2);
  EXPECT_EQ(bandwidth.ops, std::vector{k::BandwidthOp::kWrite});
  EXPECT_EQ(bandwidth.buffer_bytes, 512u << 20);
  const auto& c2c = probe.Of<CoreToCoreSettings>();
  EXPECT_EQ(c2c.spec.samples, 11);
  EXPECT_EQ(c2c.spec.round_trips, 500);
  EXPECT_EQ(c2c.spec.total_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(FigureContextFrom(c).threads, 2);
  const BufferSettings buffers = BufferSettingsFrom(c);
  EXPECT_EQ(buffers.pages, k::PagePolicy::kHugetlb);
  EXPECT_EQ(buffers.budget_bytes, 2u << 30);
}

// A kind's settings never set read as its type's defaults (what the CLI and
// tests build on), and a copy is a copy: the daemon hands each runner its own.
TEST(SettingsFrom, KindSettingsAreValuesDefaultingToTheirType) {
  ProbeSettings settings;
  EXPECT_EQ(std::as_const(settings).Of<BandwidthSettings>().threads, 1);
  EXPECT_EQ(std::as_const(settings).Of<LoadedLatencySettings>().delays_ns, DefaultDelays());
  settings.Of<BandwidthSettings>().threads = 4;
  const ProbeSettings copy = settings;
  settings.Of<BandwidthSettings>().threads = 8;
  EXPECT_EQ(copy.Of<BandwidthSettings>().threads, 4);
  EXPECT_EQ(settings.Of<BandwidthSettings>().threads, 8);
  EXPECT_EQ(copy.Of<LatencySettings>().stride, 128u);
}

}  // namespace
}  // namespace numaprobe::daemon
