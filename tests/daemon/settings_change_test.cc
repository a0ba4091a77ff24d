// SPDX-License-Identifier: Apache-2.0
// SettingsChanges: which kinds re-record, and which keys say why.
#include "daemon/serve/results/settings_change.h"

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

using Settings = std::map<std::string, std::string>;

TEST(SettingsChange, NamesEachChangedKeyOfEachChangedKind) {
  const Settings recorded{{"latency", "latency.stride=128;latency.buffer=16777216;memory.budget=1;memory.pages=auto"},
                          {"bandwidth", "bandwidth.burst=4194304;memory.budget=1;memory.pages=auto"}};
  const Settings now{{"latency", "latency.stride=128;latency.buffer=33554432;memory.budget=1;memory.pages=huge"},
                     {"bandwidth", "bandwidth.burst=4194304;memory.budget=1;memory.pages=auto"}};
  const auto changes = SettingsChanges(recorded, now);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, "latency");
  EXPECT_EQ(changes[0].Describe(), "latency.buffer 16777216 -> 33554432, memory.pages auto -> huge");
}

TEST(SettingsChange, AKeyOnOneSideOnlyAndAKindNeverRecorded) {
  const Settings recorded{{"latency", "latency.stride=128"}};
  const Settings now{{"latency", "latency.stride=128;latency.window=2097152"}, {"peak_bandwidth", "x=1"}};
  const auto changes = SettingsChanges(recorded, now);
  // peak_bandwidth has no recorded baseline to lose.
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].Describe(), "latency.window (none) -> 2097152");
}

TEST(SettingsChange, TheSameValuesWrittenDifferentlyShowTheTexts) {
  const auto changes = SettingsChanges({{"latency", "a=1;;b=2"}}, {{"latency", "a=1;b=2"}});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].Describe(), "settings a=1;;b=2 -> a=1;b=2");
}

TEST(SettingsChange, NothingChanged) {
  EXPECT_TRUE(SettingsChanges({{"latency", "a=1"}}, {{"latency", "a=1"}}).empty());
}

}  // namespace
}  // namespace numaprobe::daemon
