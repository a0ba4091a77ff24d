// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/config/config_print.cc: the effective configuration
// that `numaprobe check-config --print` writes. Whether it agrees key by key
// with docs/numaprobe.reference.yaml is tests/deploy/test_config_files.py's.
#include "daemon/config/config_print.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/probing/probe_table.h"

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;

Config ReadBack(const std::string& yaml) {
  ConfigResult result = ParseConfig(yaml, ProbeTableSections());
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&result)) {
    for (const ConfigError& e : *errors) ADD_FAILURE() << e.ToString() << "\nin:\n" << yaml;
    return Config{};
  }
  return std::get<Config>(result);
}

TEST(FormatConfig, TheDefaultsReadBackAsTheDefaults) {
  const std::string text = FormatConfig(Config{}, ProbeTableSections());
  EXPECT_TRUE(ReadBack(text) == Config{}) << text;
}

TEST(FormatConfig, EveryKeyOfEveryKindIsWritten) {
  const std::string text = FormatConfig(Config{}, ProbeTableSections());
  for (const KindSection* kind : ProbeTableSections()) {
    EXPECT_THAT(text, HasSubstr("\n  " + std::string(kind->name()) + ":\n")) << text;
    for (std::string_view key : kind->ConfigKeys()) {
      EXPECT_THAT(text, HasSubstr("\n    " + std::string(key) + ": ")) << kind->name() << "." << key << "\n" << text;
    }
    for (std::string_view key : kind->TargetKeys()) {
      EXPECT_THAT(text, HasSubstr("\n  " + std::string(key) + ": ")) << "targets." << key << "\n" << text;
    }
  }
  for (const char* key :
       {"\nschedule:\n  duty_cycle: 0.002\n  learning_duty_cycle: auto\n  interval: 5m\n  jitter: 0.2\n  priority: "
        "idle\n",
        "\nmemory:\n  budget: 320MiB\n  pages: auto\n", "\nbaseline:\n  rounds: 15\n  accept_changes: []\n",
        "\nstate_directory: /var/lib/numaprobe\n", "\nprobe_lock_file: \"/run/lock/numaprobe.lock\"\n",
        "\nnode_feature_directory: \"\"\n"}) {
    EXPECT_THAT(text, HasSubstr(key)) << text;
  }
}

TEST(FormatConfig, ANonDefaultConfigReadsBackUnchanged) {
  const Config c = ReadBack(R"(
probes:
  latency: {enabled: false, stride_bytes: 256, buffer_size: 64MiB, samples: 9, loads_per_sample: 100000}
  bandwidth: {ops: [copy, read], threads: 2, buffer_size: 1GiB, burst_size: 16MiB, bursts: 3}
  core_to_core: {enabled: false, samples: 11, round_trips: 500}
  loaded_latency: {enabled: true, traffic: [read2-ntwrite1], load_threads: 3, samples: 4, loads_per_sample: 2000}
targets:
  cpus: "0-3,8"
  mem_nodes: [1, 0]
  per_cpu: true
  c2c_cpus: [4, 2]
schedule: {duty_cycle: 0.05, learning_duty_cycle: 0.08, interval: 1h30m, jitter: 0, priority: nice19}
memory: {budget: 2GiB, pages: 4k}
baseline: {rounds: 5, accept_changes: [kernel=*, "microcode=0x2b000590"]}
state_directory: /srv/numaprobe state
probe_lock_file: ""
node_feature_directory: /etc/kubernetes/node-feature-discovery/features.d
)");
  ASSERT_FALSE(c == Config{});
  const std::string text = FormatConfig(c, ProbeTableSections());
  EXPECT_TRUE(ReadBack(text) == c) << text;
  EXPECT_THAT(text, HasSubstr("ops: [copy, read]"));
  EXPECT_THAT(text, HasSubstr("cpus: \"0-3,8\""));
  EXPECT_THAT(text, HasSubstr("interval: 1h30m"));
  EXPECT_THAT(text, HasSubstr("probe_lock_file: \"\""));
  EXPECT_THAT(text, HasSubstr("learning_duty_cycle: 0.08"));
  EXPECT_THAT(text, HasSubstr("accept_changes: [kernel=*, microcode=0x2b000590]"));
  // What it prints, printed again, is the same text.
  EXPECT_EQ(FormatConfig(ReadBack(text), ProbeTableSections()), text);
}

}  // namespace
}  // namespace numaprobe::daemon
