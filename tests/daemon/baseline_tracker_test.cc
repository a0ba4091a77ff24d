// Unit tests for daemon/serve/baseline_tracker.cc: which changes keep the
// baseline (and are recorded as host changes), which start a new one, and the
// operator's accept/reset markers.
#include "daemon/serve/baseline_tracker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;

// The settings text saved with every baseline: a different text for the same
// settings would discard every host's baseline on upgrade, so it is frozen.
// The first is the text of a state file a daemon wrote
// (tests/fuzz/corpus/fuzz_state/daemon_state.json).
TEST(MeasurementSettings, TextIsFrozen) {
  Config c;
  c.probes.Of<LatencyConfig>().buffer_bytes = 64u << 20;
  c.probes.Of<LatencyConfig>().loads_per_sample = 5000;
  c.probes.Of<BandwidthConfig>().buffer_bytes = 64u << 20;
  c.probes.Of<BandwidthConfig>().burst_bytes = 4u << 20;
  c.probes.Of<BandwidthConfig>().bursts = 3;
  c.memory.budget_bytes = 512u << 20;
  EXPECT_EQ(MeasurementSettings(c),
            "latency.stride=128;latency.buffer=67108864;latency.loads=5000;bandwidth.buffer=67108864;"
            "bandwidth.burst=4194304;bandwidth.bursts=3;bandwidth.threads=1;memory.budget=536870912;memory.pages=auto");
  EXPECT_EQ(
      MeasurementSettings(Config{}),
      "latency.stride=128;latency.buffer=0;latency.loads=40000;bandwidth.buffer=268435456;"
      "bandwidth.burst=33554432;bandwidth.bursts=5;bandwidth.threads=1;memory.budget=335544320;memory.pages=auto");
  // Settings of kinds without a baseline are not part of it.
  Config other = c;
  other.probes.Of<CoreToCoreConfig>().samples = 3;
  other.probes.Of<LoadedLatencyConfig>().samples = 2;
  EXPECT_EQ(MeasurementSettings(other), MeasurementSettings(c));
}
using ::testing::IsEmpty;
using ::testing::SizeIs;

const std::string kTopology = "nodes=0,1;distances=10,21,21,10";
const std::string kSettings = "latency.stride=128";

std::map<std::string, std::string> Facts(const std::string& kernel = "6.1.0-18-amd64",
                                         const std::string& microcode = "0xb4") {
  return {{"kernel", kernel},           {"microcode", microcode},  {"firmware", "2.1.3"},
          {"numaprobe_version", "1.0"}, {"cpu_model", "Test CPU"}, {"page_size", "auto"}};
}

BaselineValue Latency(int mem_node, double value) {
  BaselineValue v;
  v.probe = "latency";
  v.cpu_node = 0;
  v.mem_node = mem_node;
  v.value = value;
  return v;
}

class BaselineTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("numaprobe-tracker-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = (root_ / "state").string();
  }
  void TearDown() override { fs::remove_all(root_); }

  // Records a complete baseline with `rounds` rounds of the given figures.
  static void Record(BaselineTracker& tracker, const std::vector<double>& figures) {
    for (double figure : figures) {
      tracker.BeginRound();
      tracker.Observe(Latency(1, figure));
      tracker.EndRound();
    }
  }

  static Snapshot Published(const BaselineTracker& tracker) {
    Snapshot s;
    tracker.Publish(s);
    return s;
  }

  fs::path root_;
  std::string dir_;
};

TEST_F(BaselineTrackerTest, FirstStartRecordsAMedianWithItsSpreadAndPersistsIt) {
  BaselineTracker tracker(dir_, 5);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  EXPECT_EQ(Published(tracker).baseline_origin, "first_start");
  Record(tracker, {100, 104, 98, 101, 99});
  const Snapshot s = Published(tracker);
  ASSERT_TRUE(s.baseline_complete);
  ASSERT_THAT(s.baseline, SizeIs(1));
  EXPECT_DOUBLE_EQ(s.baseline[0].value, 100);
  ASSERT_THAT(s.baseline_spread, SizeIs(1));
  EXPECT_DOUBLE_EQ(s.baseline_spread[0].value, (104.0 - 98.0) / 100.0);
  const LoadedState state = LoadState(dir_);
  ASSERT_TRUE(state.baseline.has_value());
  EXPECT_EQ(state.baseline->topology, kTopology);
  EXPECT_EQ(state.baseline->facts.at("kernel"), "6.1.0-18-amd64");
  ASSERT_THAT(state.baseline->spread, SizeIs(1));
}

TEST_F(BaselineTrackerTest, ValueOfASeriesOnlyOnceTheBaselineIsComplete) {
  BaselineTracker tracker(dir_, 3);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  Record(tracker, {100, 104});
  EXPECT_FALSE(tracker.ValueOf(Latency(1, 0)).has_value()) << "still recording";
  Record(tracker, {98});
  ASSERT_TRUE(tracker.ValueOf(Latency(1, 0)).has_value());
  EXPECT_DOUBLE_EQ(*tracker.ValueOf(Latency(1, 0)), 100);
  EXPECT_FALSE(tracker.ValueOf(Latency(0, 0)).has_value()) << "a pair the baseline lacks";
  BaselineValue bandwidth = Latency(1, 0);
  bandwidth.probe = "bandwidth";
  bandwidth.op = "read";
  EXPECT_FALSE(tracker.ValueOf(bandwidth).has_value()) << "another probe of the same pair";
}

TEST_F(BaselineTrackerTest, KernelAndMicrocodeChangesKeepTheBaselineAndAreRecordedAcrossRestarts) {
  {
    BaselineTracker tracker(dir_, 1);
    tracker.Load("fp1", kSettings, kTopology, Facts(), 1000);
    Record(tracker, {100});
  }
  {
    // A restart on a new kernel and microcode: the old baseline stays the reference.
    BaselineTracker tracker(dir_, 1);
    tracker.Load("fp2", kSettings, kTopology, Facts("6.6.13-amd64", "0xb6"), 2000);
    const Snapshot s = Published(tracker);
    EXPECT_EQ(s.baseline_origin, "restored");
    ASSERT_TRUE(s.baseline_complete);
    EXPECT_DOUBLE_EQ(s.baseline[0].value, 100);
    ASSERT_THAT(s.host_changes, SizeIs(2));
    EXPECT_EQ(s.host_changes[0].field, "kernel");
    EXPECT_EQ(s.host_changes[0].before, "6.1.0-18-amd64");
    EXPECT_EQ(s.host_changes[0].after, "6.6.13-amd64");
    EXPECT_DOUBLE_EQ(s.host_changes[0].unix_seconds, 2000);
    EXPECT_EQ(s.host_changes[1].field, "microcode");
    // New rounds do not replace a complete baseline.
    Record(tracker, {150});
    EXPECT_DOUBLE_EQ(Published(tracker).baseline[0].value, 100);
    // A reload on the same host adds nothing and keeps the first-seen time.
    tracker.Load("fp2", kSettings, kTopology, Facts("6.6.13-amd64", "0xb6"), 3000);
    EXPECT_THAT(Published(tracker).host_changes, SizeIs(2));
    EXPECT_DOUBLE_EQ(Published(tracker).host_changes[0].unix_seconds, 2000);
  }
  // Another restart, another kernel: one series per change, first seen times kept.
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp3", kSettings, kTopology, Facts("6.7.1-amd64", "0xb6"), 4000);
  const Snapshot s = Published(tracker);
  EXPECT_EQ(s.baseline_origin, "restored");
  ASSERT_THAT(s.host_changes, SizeIs(3));
  EXPECT_DOUBLE_EQ(s.host_changes[0].unix_seconds, 2000);
  EXPECT_EQ(s.host_changes[2].before, "6.6.13-amd64");
  EXPECT_EQ(s.host_changes[2].after, "6.7.1-amd64");
  EXPECT_DOUBLE_EQ(s.host_changes[2].unix_seconds, 4000);
}

TEST_F(BaselineTrackerTest, ATopologyChangeStartsANewBaseline) {
  {
    BaselineTracker tracker(dir_, 1);
    tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
    Record(tracker, {100});
  }
  BaselineTracker tracker(dir_, 1);
  // NPS2: four nodes.
  tracker.Load("fp-nps2", kSettings, "nodes=0,1,2,3;distances=10,12,32,32,12,10,32,32,32,32,10,12,32,32,12,10", Facts(),
               2000);
  Snapshot s = Published(tracker);
  EXPECT_EQ(s.baseline_origin, "topology_changed");
  EXPECT_FALSE(s.baseline_complete);
  EXPECT_THAT(s.baseline, IsEmpty());
  EXPECT_THAT(s.host_changes, IsEmpty());
  Record(tracker, {130});
  s = Published(tracker);
  ASSERT_TRUE(s.baseline_complete);
  EXPECT_DOUBLE_EQ(s.baseline[0].value, 130);
}

TEST_F(BaselineTrackerTest, ASettingsChangeStartsANewBaseline) {
  {
    BaselineTracker tracker(dir_, 1);
    tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
    Record(tracker, {100});
  }
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp", "latency.stride=64", kTopology, Facts(), 2000);
  EXPECT_EQ(Published(tracker).baseline_origin, "settings_changed");
  EXPECT_FALSE(Published(tracker).baseline_complete);
}

TEST_F(BaselineTrackerTest, AcceptRecordsTheCurrentLevelAndClearsTheChanges) {
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  Record(tracker, {100});
  tracker.Load("fp2", kSettings, kTopology, Facts("6.6.13-amd64"), 2000);
  ASSERT_THAT(Published(tracker).host_changes, SizeIs(1));

  ASSERT_EQ(ResetState(dir_, "accept"), "");
  tracker.Load("fp2", kSettings, kTopology, Facts("6.6.13-amd64"), 3000);  // SIGHUP
  Snapshot s = Published(tracker);
  EXPECT_EQ(s.baseline_origin, "accepted");
  EXPECT_FALSE(s.baseline_complete);
  EXPECT_THAT(s.host_changes, IsEmpty());
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "state.json")) << "the marker is acted on once";
  Record(tracker, {120});
  s = Published(tracker);
  EXPECT_EQ(s.baseline_origin, "accepted");
  ASSERT_TRUE(s.baseline_complete);
  EXPECT_DOUBLE_EQ(s.baseline[0].value, 120);
  EXPECT_THAT(s.host_changes, IsEmpty());
  // The accepted baseline belongs to the new kernel: no change to report after a restart.
  BaselineTracker restarted(dir_, 1);
  restarted.Load("fp2", kSettings, kTopology, Facts("6.6.13-amd64"), 4000);
  EXPECT_EQ(Published(restarted).baseline_origin, "restored");
  EXPECT_THAT(Published(restarted).host_changes, IsEmpty());
}

TEST_F(BaselineTrackerTest, ResetKeepsItsOrigin) {
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  Record(tracker, {100});
  ASSERT_EQ(ResetState(dir_), "");
  tracker.Load("fp", kSettings, kTopology, Facts(), 2000);
  EXPECT_EQ(Published(tracker).baseline_origin, "reset");
  EXPECT_FALSE(Published(tracker).baseline_complete);
}

TEST_F(BaselineTrackerTest, AReloadThatChangesRoundsAppliesToTheRecordingInProgress) {
  BaselineTracker tracker(dir_, 5);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  Record(tracker, {100, 102});
  EXPECT_FALSE(Published(tracker).baseline_complete);
  tracker.Reconfigure(dir_, 3);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1100);  // a reload re-plans and loads again
  Record(tracker, {101});
  const Snapshot s = Published(tracker);
  ASSERT_TRUE(s.baseline_complete) << "3 rounds seen with baseline.rounds reloaded to 3";
  EXPECT_DOUBLE_EQ(s.baseline[0].value, 101);
}

TEST_F(BaselineTrackerTest, AStateFileWithoutTopologyIsAdoptedWhenTheFingerprintMatches) {
  Baseline old;
  old.fingerprint = "fp";
  old.settings = kSettings;
  old.created = "2024-05-01T00:00:00Z";
  old.complete = true;
  old.values = {Latency(1, 100)};
  ASSERT_EQ(SaveState(dir_, old), "");
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  EXPECT_EQ(Published(tracker).baseline_origin, "restored");
  EXPECT_THAT(Published(tracker).host_changes, IsEmpty());
  EXPECT_EQ(LoadState(dir_).baseline->topology, kTopology) << "upgraded in place";
}

// A state directory that cannot be written (here: its parent is a regular
// file, ENOTDIR, which also holds for root, unlike a 0555 mode) keeps the
// baseline in memory, says so in the snapshot, and is retried after every
// round until the write succeeds.
TEST_F(BaselineTrackerTest, FailedSaveIsRetriedEveryRoundUntilItSucceeds) {
  const fs::path blocker = root_ / "blocker";
  std::ofstream(blocker) << "a file where the state directory's parent should be";
  const std::string dir = (blocker / "state").string();
  BaselineTracker tracker(dir, 1);
  tracker.Load("fp", kSettings, kTopology, Facts(), 1000);
  EXPECT_TRUE(Published(tracker).state_write_successful);  // nothing written yet
  Record(tracker, {100});
  Snapshot s = Published(tracker);
  EXPECT_TRUE(s.baseline_complete);
  EXPECT_FALSE(s.state_write_successful);
  EXPECT_EQ(s.state_write_failures_total, 1u);

  Record(tracker, {200});  // a round ends: retried, fails again
  EXPECT_EQ(Published(tracker).state_write_failures_total, 2u);

  fs::remove(blocker);
  fs::create_directories(blocker);
  Record(tracker, {300});
  s = Published(tracker);
  EXPECT_TRUE(s.state_write_successful);
  EXPECT_EQ(s.state_write_failures_total, 2u);
  const LoadedState loaded = LoadState(dir);
  ASSERT_EQ(loaded.status, LoadedState::Status::kOk) << loaded.error;
  ASSERT_TRUE(loaded.baseline.has_value());
  ASSERT_THAT(loaded.baseline->values, SizeIs(1));
  EXPECT_DOUBLE_EQ(loaded.baseline->values[0].value, 100);  // the recorded baseline, not later rounds

  Record(tracker, {400});  // nothing pending: no further write attempts counted
  EXPECT_EQ(Published(tracker).state_write_failures_total, 2u);
}

// A runtime fact flipped while the daemon runs: seen at the next round's look
// (no reload, no restart), kept with the baseline, still there after a restart.
TEST_F(BaselineTrackerTest, ARuntimeFactChangeIsARecordedHostChangeWithoutARestart) {
  auto facts = Facts();
  facts["thp_enabled"] = "always";
  {
    BaselineTracker tracker(dir_, 1);
    tracker.Load("fp", kSettings, kTopology, facts, 1000);
    Record(tracker, {100});
    tracker.ObserveHost(facts, 1100);
    EXPECT_THAT(Published(tracker).host_changes, IsEmpty());
    facts["thp_enabled"] = "never";
    tracker.ObserveHost(facts, 1200);
    const Snapshot s = Published(tracker);
    ASSERT_THAT(s.host_changes, SizeIs(1));
    EXPECT_EQ(s.host_changes[0].field, "thp_enabled");
    EXPECT_EQ(s.host_changes[0].before, "always");
    EXPECT_EQ(s.host_changes[0].after, "never");
    EXPECT_DOUBLE_EQ(s.host_changes[0].unix_seconds, 1200);
    EXPECT_TRUE(s.baseline_complete) << "a host change keeps the baseline";
    EXPECT_DOUBLE_EQ(s.baseline[0].value, 100);
  }
  BaselineTracker restarted(dir_, 1);
  restarted.Load("fp", kSettings, kTopology, facts, 2000);
  const Snapshot s = Published(restarted);
  EXPECT_EQ(s.baseline_origin, "restored");
  ASSERT_THAT(s.host_changes, SizeIs(1)) << "persisted when seen, not re-detected";
  EXPECT_DOUBLE_EQ(s.host_changes[0].unix_seconds, 1200);
}

TEST_F(BaselineTrackerTest, AChangeWhileRecordingIsKeptAndSavedWithTheBaseline) {
  BaselineTracker tracker(dir_, 2);
  auto facts = Facts();
  facts["numa_balancing"] = "0";
  tracker.Load("fp", kSettings, kTopology, facts, 1000);
  Record(tracker, {100});
  facts["numa_balancing"] = "1";
  tracker.ObserveHost(facts, 1100);
  ASSERT_THAT(Published(tracker).host_changes, SizeIs(1)) << "the baseline being recorded saw it";
  Record(tracker, {100});
  const LoadedState state = LoadState(dir_);
  ASSERT_TRUE(state.baseline && state.baseline->complete);
  ASSERT_THAT(state.baseline->changes, SizeIs(1));
  EXPECT_EQ(state.baseline->changes[0].field, "numa_balancing");
}

TEST_F(BaselineTrackerTest, ChangesAreBoundedToTheMostRecent) {
  BaselineTracker tracker(dir_, 1);
  auto facts = Facts();
  facts["thp_enabled"] = "always";
  tracker.Load("fp", kSettings, kTopology, facts, 1000);
  Record(tracker, {100});
  for (int i = 0; i < 40; ++i) {
    facts["thp_enabled"] = i % 2 == 0 ? "never" : "always";
    tracker.ObserveHost(facts, 2000 + i);
  }
  const Snapshot s = Published(tracker);
  ASSERT_THAT(s.host_changes, SizeIs(kMaxHostChanges));
  EXPECT_DOUBLE_EQ(s.host_changes.back().unix_seconds, 2039);
  EXPECT_DOUBLE_EQ(s.host_changes.front().unix_seconds, 2040 - kMaxHostChanges);
  EXPECT_THAT(LoadState(dir_).baseline->changes, SizeIs(kMaxHostChanges));
}

TEST_F(BaselineTrackerTest, MemoryErrorsAreCountedFromTheBaseline) {
  BaselineTracker tracker(dir_, 1);
  tracker.Load("fp", kSettings, kTopology, HostObservation(Facts(), MemoryErrorCounts{5, 1}), 1000);
  Record(tracker, {100});
  tracker.ObserveHost(HostObservation(Facts(), MemoryErrorCounts{5, 1}), 1100);
  Snapshot s = Published(tracker);
  ASSERT_TRUE(s.memory_errors_since_baseline);
  EXPECT_EQ(s.memory_errors_since_baseline->corrected, 0u);
  EXPECT_THAT(s.host_changes, IsEmpty());

  tracker.ObserveHost(HostObservation(Facts(), MemoryErrorCounts{12, 1}), 1200);
  s = Published(tracker);
  EXPECT_EQ(s.memory_errors_since_baseline->corrected, 7u);
  EXPECT_EQ(s.memory_errors_since_baseline->uncorrected, 0u);
  ASSERT_THAT(s.host_changes, SizeIs(1));
  EXPECT_EQ(s.host_changes[0].field, "memory_errors_since_baseline");
  EXPECT_EQ(s.host_changes[0].before, "none");
  EXPECT_EQ(s.host_changes[0].after, "corrected");

  // After a restart the counts at the baseline come from the state file.
  BaselineTracker restarted(dir_, 1);
  restarted.Load("fp", kSettings, kTopology, HostObservation(Facts(), MemoryErrorCounts{13, 1}), 2000);
  restarted.ObserveHost(HostObservation(Facts(), MemoryErrorCounts{13, 1}), 2000);
  EXPECT_EQ(Published(restarted).memory_errors_since_baseline->corrected, 8u);
  // A reboot resets EDAC's counters: counted from zero again, never negative.
  restarted.ObserveHost(HostObservation(Facts(), MemoryErrorCounts{2, 0}), 2100);
  EXPECT_EQ(Published(restarted).memory_errors_since_baseline->corrected, 2u);
  EXPECT_EQ(Published(restarted).memory_errors_since_baseline->uncorrected, 0u);
  // No EDAC: nothing counted.
  restarted.ObserveHost(HostObservation(Facts()), 2200);
  EXPECT_FALSE(Published(restarted).memory_errors_since_baseline);
}

}  // namespace
}  // namespace numaprobe::daemon
