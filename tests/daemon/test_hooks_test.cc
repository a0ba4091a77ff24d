// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/common/test_hooks.cc: test-only hooks are refused
// outside test mode.
#include "daemon/common/test_hooks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;

// The kinds the daemon lets a test scale (probe_table.h TestScaledKinds()).
const std::vector<std::string> kScaled = {"latency", "bandwidth"};

GetEnv Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(TestHooksTest, NothingSetIsNothingActive) {
  TestHooks hooks;
  EXPECT_EQ(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}}), kScaled), "");
  EXPECT_FALSE(hooks.active());
}

TEST(TestHooksTest, RefusedWithoutTestMode) {
  TestHooks hooks;
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_SCALE_LATENCY", "1.15"}}), kScaled),
              HasSubstr("test-only hooks (NUMAPROBE_TEST_HOST_OVERRIDES, NUMAPROBE_TEST_SCALE_LATENCY, "
                        "NUMAPROBE_TEST_SCALE_BANDWIDTH, NUMAPROBE_TEST_TASK_COSTS, NUMAPROBE_TEST_CONFIRMATIONS) are "
                        "set but NUMAPROBE_TEST_MODE=1 is not"));
  EXPECT_FALSE(hooks.active());
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_HOST_OVERRIDES", "kernel=6.6"}, {"NUMAPROBE_TEST_MODE", "0"}}),
                            kScaled),
              HasSubstr("refusing"));
  EXPECT_FALSE(hooks.active());
}

TEST(TestHooksTest, ParsedInTestMode) {
  TestHooks hooks;
  ASSERT_EQ(ReadTestHooks(hooks,
                          Env({{"NUMAPROBE_TEST_MODE", "1"},
                               {"NUMAPROBE_TEST_SCALE_LATENCY", "1.15"},
                               {"NUMAPROBE_TEST_HOST_OVERRIDES", "kernel=6.6.13-amd64,microcode=0xb6"}}),
                          kScaled),
            "");
  EXPECT_TRUE(hooks.fault_injection_active());
  EXPECT_EQ(hooks.scales, (std::vector<std::pair<std::string, double>>{{"latency", 1.15}, {"bandwidth", 1}}));
  EXPECT_EQ(hooks.DescribeScales(" figures"), "latency figures x1.15, bandwidth figures x1");
  HostInfo host;
  host.kernel = "6.1.0";
  host.microcode = "0x1";
  ApplyHostOverrides(hooks, host);
  EXPECT_EQ(host.kernel, "6.6.13-amd64");
  EXPECT_EQ(host.microcode, "0xb6");
}

TEST(TestHooksTest, MalformedValuesAreErrors) {
  TestHooks hooks;
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_SCALE_LATENCY", "abc"}}),
                            kScaled),
              HasSubstr("NUMAPROBE_TEST_SCALE_LATENCY=abc"));
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_HOST_OVERRIDES", "thp=never"}}),
                            kScaled),
              HasSubstr("\"thp=never\""));
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_TASK_COSTS", "costs.json"}}),
                            kScaled),
              HasSubstr("NUMAPROBE_TEST_TASK_COSTS=costs.json: expected an absolute file name"));
}

TEST(TestHooksTest, TaskCostsFileIsAHookOfItsOwn) {
  TestHooks hooks;
  ASSERT_EQ(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_TASK_COSTS", "/tmp/costs.json"}}),
                          kScaled),
            "");
  EXPECT_EQ(hooks.task_costs_file, "/tmp/costs.json");
  EXPECT_TRUE(hooks.active());
  EXPECT_FALSE(hooks.fault_injection_active()) << "fixed costs change the schedule, not the figures";
}

TEST(TestHooksTest, ConfirmationsOffOnlyInTestModeAndOnlyAsOff) {
  TestHooks hooks;
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_CONFIRMATIONS", "off"}}), kScaled),
              HasSubstr("NUMAPROBE_TEST_MODE=1 is not"));
  EXPECT_FALSE(hooks.confirmations_off);
  EXPECT_THAT(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_CONFIRMATIONS", "0"}}), kScaled),
              HasSubstr("NUMAPROBE_TEST_CONFIRMATIONS=0: expected off"));
  EXPECT_FALSE(hooks.confirmations_off);
  ASSERT_EQ(ReadTestHooks(hooks, Env({{"NUMAPROBE_TEST_MODE", "1"}, {"NUMAPROBE_TEST_CONFIRMATIONS", "off"}}), kScaled),
            "");
  EXPECT_TRUE(hooks.confirmations_off);
  EXPECT_TRUE(hooks.active());
  EXPECT_FALSE(hooks.fault_injection_active()) << "it changes which runs happen, not the figures";
}

TEST(HostInfoTest, FirmwareIsTheBiosVersionOrUnknown) {
  const std::string root = ::testing::TempDir() + "/numaprobe-hostinfo";
  std::filesystem::create_directories(root + "/sys/class/dmi/id");
  HostInfo host = ReadHostInfo("cpu", root + "/proc", root + "/sys");
  EXPECT_EQ(host.firmware, "unknown");
  std::ofstream(root + "/sys/class/dmi/id/bios_version") << "2.19.1\n";
  host = ReadHostInfo("cpu", root + "/proc", root + "/sys");
  EXPECT_EQ(host.firmware, "2.19.1");
  std::filesystem::remove_all(root);
}

// Firmware strings are arbitrary bytes; facts are printable ASCII, so they
// can go into JSON and label values (daemon/common/printable_text.h).
TEST(HostInfoTest, BytesOutsidePrintableAsciiBecomeQuestionMarks) {
  const std::string root = ::testing::TempDir() + "/numaprobe-hostinfo-bytes";
  std::filesystem::create_directories(root + "/sys/class/dmi/id");
  std::ofstream(root + "/sys/class/dmi/id/bios_version") << "V\xff\x01 2\xc3\n";
  const HostInfo host = ReadHostInfo("cpu\xfe", root + "/proc", root + "/sys");
  EXPECT_EQ(host.firmware, "V?? 2?");
  EXPECT_EQ(host.cpu_model, "cpu?");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace numaprobe::daemon
