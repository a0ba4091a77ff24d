// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/results/result_model.cc, driven synchronously
// (no loop, no threads, no clock): what happens when runs land, host facts
// change, the configuration or the operator asks, and the daemon restarts on
// what it saved.
#include "daemon/serve/results/result_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "daemon/probing/kinds/kind_settings.h"
#include "daemon/probing/kinds/kinds.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {
namespace {

namespace k = kernels;
using ::testing::HasSubstr;

using Files = std::map<std::string, std::string>;

// A storage whose files can be made unreadable and whose removals can fail
// (a read-only directory), over a shared map like the simulation's.
class FlakyStorage final : public StateStorage {
 public:
  FlakyStorage(std::shared_ptr<Files> files, bool* unreadable, bool* read_only)
      : files_(std::move(files)), unreadable_(unreadable), read_only_(read_only) {}
  std::string Where() const override { return "/var/lib/numaprobe"; }
  StoredText Read(const std::string& name) override {
    if (*unreadable_ && name == kStateFile) {
      return {StoredText::Status::kUnreadable, "", "cannot read /var/lib/numaprobe/state.json: Permission denied"};
    }
    const auto it = files_->find(name);
    if (it == files_->end()) return {};
    return {StoredText::Status::kOk, it->second, ""};
  }
  std::string Write(const std::string& name, const std::string& text) override {
    ++writes;
    if (*read_only_) return "cannot create /var/lib/numaprobe/.state.json.tmp: Read-only file system";
    (*files_)[name] = text;
    return "";
  }
  std::string Remove(const std::string& name) override {
    if (*read_only_) return "cannot remove /var/lib/numaprobe/" + name + ": Read-only file system";
    files_->erase(name);
    return "";
  }
  std::string KeepCorrupt(const std::string& name, const std::string& stamp) override {
    (*files_)[name + ".corrupt-" + stamp] = (*files_)[name];
    files_->erase(name);
    return "";
  }
  int writes = 0;

 private:
  std::shared_ptr<Files> files_;
  bool* unreadable_;
  bool* read_only_;
};

k::Topology Nodes(int n) {
  auto topology = k::Topology::FromSynthetic("pack:" + std::to_string(n) + " [numa(memory=1GiB)] core:2 pu:1", {});
  EXPECT_TRUE(topology.ok());
  return std::move(topology).value();
}

// A daemon's life as far as the model sees it: the host, its plan, the model.
class Life {
 public:
  Life(std::shared_ptr<Files> files, Config config, int nodes = 2, std::string topology_signature = "")
      : config_(std::move(config)), topology_(Nodes(nodes)), store_() {
    auto storage = std::make_unique<FlakyStorage>(files, &unreadable, &read_only);
    storage_ = storage.get();
    auto plan = BuildPlan(config_.targets, topology_);
    EXPECT_TRUE(plan.ok());
    plan_ = std::move(plan).value();
    signature_ = topology_signature.empty() ? TopologySignature(topology_) : topology_signature;
    model_ = std::make_unique<ResultModel>(store_, std::move(storage), config_);
  }

  // The plan's baseline series, as the scheduler hands them over.
  std::set<SeriesKey> Series() const {
    std::set<SeriesKey> series;
    for (const Task& task : RoundTasks(plan_, config_, topology_)) {
      if (task.kind->traits().has_baseline) series.insert(task.kind->SeriesOf(task.target, config_.targets.per_cpu));
    }
    return series;
  }
  void Plan(double unix_now = 1000) {
    const PlannedHost planned{config_, topology_, plan_, host_, "fingerprint", signature_, Series()};
    model_->Plan(planned, Host(), RuntimeFacts{}, Moment{Ns(unix_now), unix_now});
  }
  void Reconfigure(Config config, double unix_now) {
    config_ = std::move(config);
    model_->Reconfigure(nullptr, config_);
    auto plan = BuildPlan(config_.targets, topology_);
    plan_ = std::move(plan).value();
    Plan(unix_now);
  }
  HostObservation Host() const { return HostObservation(facts, errors); }
  void Observe(double unix_now) { model_->ObserveHost(Host(), RuntimeFacts{}, Moment{Ns(unix_now), unix_now}); }

  // Every task of a round lands with `value` (latency seconds; bandwidth is
  // value x 1e17 bytes per second); true if any needed confirming.
  bool Round(double unix_now, double value = 1e-7) {
    bool confirm = false;
    for (const Task& task : RoundTasks(plan_, config_, topology_)) confirm = Land(task, unix_now, value) || confirm;
    return confirm;
  }
  bool Land(const Task& task, double unix_now, double value, k::Outcome outcome = k::Outcome::kOk,
            LoopFacts loop = {}) {
    const double figure = task.kind == &BandwidthProbe() ? value * 1e17 : value;
    const ProbeRun run{task.kind->Simulated(task.target, outcome, figure), 0.01, 0};
    return model_->Land(task, run, Moment{Ns(unix_now), unix_now}, loop);
  }
  void Stop(double unix_now) { model_->Save(Moment{Ns(unix_now), unix_now}, /*force=*/true); }
  void ReloadState(double unix_now) { model_->ReloadState(Moment{Ns(unix_now), unix_now}); }

  Snapshot Now() const { return *store_.Current(); }
  std::uint64_t Publications() const { return store_.Publications(); }
  ResultModel& model() { return *model_; }
  const std::vector<Task> Tasks() const { return RoundTasks(plan_, config_, topology_); }

  std::map<std::string, std::string> facts{{"kernel", "6.1.0"}, {"microcode", "0x1"}};
  std::optional<MemoryErrorCounts> errors;
  bool unreadable = false;
  bool read_only = false;
  FlakyStorage* storage_ = nullptr;

 private:
  static std::int64_t Ns(double unix) { return static_cast<std::int64_t>(unix * 1e9); }
  Config config_;
  k::Topology topology_;
  ResultStore store_;
  HostInfo host_;
  daemon::Plan plan_;
  std::string signature_;
  std::unique_ptr<ResultModel> model_;
};

Config TwoFigures() {
  Config config;
  config.baseline.rounds = 2;
  config.probes.Of<CoreToCoreConfig>().enabled = false;
  config.probes.Of<BandwidthConfig>().ops = {k::BandwidthOp::kRead};
  return config;
}

const SeriesKey kRemote{"latency", -1, 0, 1, ""};

std::optional<double> BaselineOf(const Snapshot& s, const SeriesKey& key) {
  for (const BaselineValue& v : s.baseline) {
    if (static_cast<const SeriesKey&>(v) == key) return v.value;
  }
  return std::nullopt;
}

TEST(ResultModel, EachSeriesArmsFromItsOwnFiguresWithItsSpread) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  EXPECT_EQ(life.Now().baseline_origin, "first_start");
  EXPECT_EQ(life.Now().baseline_progress.recording, 8) << "4 latency and 4 read bandwidth series";
  life.Round(1100, 1.0e-7);
  // One series fails its second run: only it stays recording.
  for (const Task& task : life.Tasks()) {
    const bool its = task.kind == &LatencyProbe() && task.target.pair.cpu_node == 0 && task.target.pair.mem_node == 1;
    life.Land(task, 1200, 1.2e-7, its ? k::Outcome::kTimeout : k::Outcome::kOk);
  }
  Snapshot s = life.Now();
  EXPECT_EQ(s.baseline_progress.armed, 7);
  EXPECT_EQ(s.baseline_progress.recording, 1);
  EXPECT_DOUBLE_EQ(s.baseline_progress.recorded_ratio, 0.5);
  EXPECT_FALSE(BaselineOf(s, kRemote));
  const SeriesKey local{"latency", -1, 0, 0, ""};
  EXPECT_DOUBLE_EQ(*BaselineOf(s, local), 1.1e-7) << "the median of 1.0 and 1.2";
  EXPECT_NEAR(s.baseline_spread[0].value, 0.2 / 1.1, 1e-9) << "(max - min) / median";
  life.Land(Task{&LatencyProbe(), MemoryTarget({1, 0, 1, true})}, 1300, 1.3e-7);
  EXPECT_TRUE(life.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(*BaselineOf(life.Now(), kRemote), 1.15e-7);
}

// A restart takes the armed baselines, the recording in progress and the
// recent figures from the state file: nothing learnt is lost.
TEST(ResultModel, ARestartLosesNothingLearnt) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  config.baseline.rounds = 3;
  {
    Life first(files, config);
    first.Plan();
    for (int r = 0; r < 4; ++r) first.Round(1100 + r, 1e-7);
    // One more figure of one series: 5 recent figures, a recent median.
    first.Land(first.Tasks()[0], 1200, 1e-7);
    first.facts["kernel"] = "6.6.13";
    first.Observe(1300);
    first.Stop(1400);
  }
  Life second(files, config);
  second.facts["kernel"] = "6.6.13";  // as the host was when the daemon stopped
  second.Plan(2000);
  const Snapshot s = second.Now();
  EXPECT_EQ(s.baseline_origin, "restored");
  EXPECT_TRUE(s.baseline_complete) << "armed before any figure";
  EXPECT_EQ(s.recent_medians.size(), 1u) << "the series with 5 figures has its median at once";
  ASSERT_EQ(s.host_changes.size(), 1u);
  EXPECT_EQ(s.host_changes[0].field, "kernel");
  EXPECT_DOUBLE_EQ(s.host_changes[0].unix_seconds, 1300) << "when first seen, not when restored";
  EXPECT_FALSE(s.worst_drift.empty()) << "drift is checked at once";
}

TEST(ResultModel, ARecordingGoesOnFromWhereItWas) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  config.baseline.rounds = 4;
  {
    Life first(files, config);
    first.Plan();
    first.Round(1100);
    first.Round(1200);
    EXPECT_DOUBLE_EQ(first.Now().baseline_progress.recorded_ratio, 0.5);
    first.Stop(1300);
  }
  Life second(files, config);
  second.Plan(2000);
  EXPECT_DOUBLE_EQ(second.Now().baseline_progress.recorded_ratio, 0.5);
  EXPECT_EQ(second.Now().baseline_progress.recording_since, std::optional<double>(1000)) << "since the first start";
  second.Round(2100);
  second.Round(2200);
  EXPECT_TRUE(second.Now().baseline_complete) << "2 figures before the restart and 2 after";
}

TEST(ResultModel, ATopologyChangeStartsOverAndStaysSaidAcrossRestarts) {
  auto files = std::make_shared<Files>();
  {
    Life first(files, TwoFigures());
    first.Plan();
    first.Round(1100);
    first.Round(1200);
    first.Stop(1300);
  }
  {
    Life changed(files, TwoFigures(), 2, "nodes=0,1;distances=10,32,32,10");
    changed.Plan(2000);
    EXPECT_EQ(changed.Now().baseline_origin, "topology_changed");
    EXPECT_EQ(changed.Now().baseline_progress.armed, 0);
    changed.Round(2100);
    changed.Round(2200);
    changed.Stop(2300);
  }
  Life again(files, TwoFigures(), 2, "nodes=0,1;distances=10,32,32,10");
  again.Plan(3000);
  EXPECT_EQ(again.Now().baseline_origin, "topology_changed") << "until accepted, whatever restarts";
  EXPECT_TRUE(again.Now().baseline_complete);
  (*files)[kRequestFile] = FormatRequest({"accept", "r1"});
  again.ReloadState(3100);
  EXPECT_EQ(again.Now().baseline_origin, "accepted");
}

// Only the kind whose settings changed records anew; its recent figures go
// with it (measured differently), the other kind keeps everything.
TEST(ResultModel, ASettingsChangeRerecordsThatKindAlone) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  Life life(files, config);
  life.Plan();
  for (int r = 0; r < 5; ++r) life.Round(1100 + r);
  ASSERT_TRUE(life.Now().baseline_complete);
  Config next = config;
  next.probes.Of<LatencyConfig>().loads_per_sample += 1000;
  life.Reconfigure(next, 2000);
  const Snapshot s = life.Now();
  EXPECT_EQ(s.baseline_origin, "settings_changed");
  EXPECT_EQ(s.baseline_progress.recording, 4) << "the latency series";
  EXPECT_EQ(s.baseline_progress.armed, 4) << "the bandwidth series";
  for (const BaselineValue& v : s.recent_medians) EXPECT_EQ(v.probe, "bandwidth");
}

// An operator's request is acted on once: its id is kept even where the
// request file cannot be removed (a read-only directory), so a later SIGHUP
// does not start the recording over again.
TEST(ResultModel, ARequestIsActedOnOnceEvenWhereItCannotBeRemoved) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  life.Round(1100);
  life.Round(1200);
  life.facts["kernel"] = "6.6.13";
  life.Observe(1250);
  ASSERT_EQ(life.Now().host_changes.size(), 1u);
  life.read_only = true;
  (*files)[kRequestFile] = FormatRequest({"accept", "r1"});
  life.ReloadState(1300);
  EXPECT_EQ(life.Now().baseline_origin, "accepted");
  EXPECT_TRUE(life.Now().host_changes.empty()) << "accept clears the changes";
  EXPECT_EQ(life.Now().baseline_progress.armed, 0);
  EXPECT_FALSE(life.Now().state_write_successful) << "the read-only directory is said";
  life.Round(1400);
  life.ReloadState(1500);  // the same request, still there
  EXPECT_EQ(life.Now().baseline_progress.recording, 8);
  EXPECT_DOUBLE_EQ(life.Now().baseline_progress.recorded_ratio, 0.5) << "one figure each of 2: not started over";
  life.read_only = false;
  (*files)[kRequestFile] = FormatRequest({"reset", "r2"});
  life.ReloadState(1600);
  EXPECT_EQ(life.Now().baseline_origin, "reset");
  EXPECT_FALSE(files->contains(kRequestFile)) << "removed once acted on";
}

// baseline.accept_changes: a change an operator declared planned re-records
// every series (origin accepted) where it is seen; another change keeps the
// baseline.
TEST(ResultModel, AConfiguredPlannedChangeIsAccepted) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  config.baseline.accept_changes = {"kernel=6.6.13", "firmware=*"};
  Life life(files, config);
  life.Plan();
  life.Round(1100);
  life.Round(1200);
  ASSERT_TRUE(life.Now().baseline_complete);
  life.facts["microcode"] = "0x2";
  life.Observe(1300);
  EXPECT_TRUE(life.Now().baseline_complete) << "not declared: the baseline stays";
  life.facts["kernel"] = "6.1.99";
  life.Observe(1400);
  EXPECT_TRUE(life.Now().baseline_complete) << "another value than declared";
  EXPECT_EQ(life.Now().host_changes.size(), 2u);
  life.facts["kernel"] = "6.6.13";
  life.Observe(1500);
  EXPECT_EQ(life.Now().baseline_origin, "accepted");
  EXPECT_FALSE(life.Now().baseline_complete);
  EXPECT_TRUE(life.Now().host_changes.empty());
}

// `numaprobe baseline accept` after a rollout: every series with kWindow
// figures since the host change arms at once at their median, so detection
// stays on; the state file keeps the new baselines.
TEST(ResultModel, AnAcceptArmsAtTheLevelMeasuredSinceTheChange) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  life.Round(1100, 1.0e-7);
  life.Round(1200, 1.0e-7);
  ASSERT_TRUE(life.Now().baseline_complete);
  life.facts["kernel"] = "6.6.13";
  life.Observe(1250);
  // Five figures since the change, the level 1.3; one figure before it at 1.0
  // is still in the recent window and must not count.
  for (double t : {1300, 1400, 1500, 1600, 1700}) life.Round(t, t == 1500 ? 1.4e-7 : 1.3e-7);
  (*files)[kRequestFile] = FormatRequest({"accept", "r1"});
  life.ReloadState(1800);
  const Snapshot s = life.Now();
  EXPECT_EQ(s.baseline_origin, "accepted");
  EXPECT_TRUE(s.host_changes.empty());
  EXPECT_TRUE(s.baseline_complete) << "no series disarmed by the accept";
  EXPECT_EQ(s.baseline_progress.armed, 8);
  EXPECT_DOUBLE_EQ(*BaselineOf(s, kRemote), 1.3e-7) << "the median of the five figures since the change";
  life.Stop(1900);
  Life restarted(files, TwoFigures());
  restarted.Plan(2000);
  EXPECT_TRUE(restarted.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(*BaselineOf(restarted.Now(), kRemote), 1.3e-7);
}

// An accept with fewer than kWindow figures since the change (here two; a
// planned change of baseline.accept_changes is accepted the moment it is
// seen, with none): the series records, but arms at kWindow figures, not at
// baseline.rounds; the figures it has since the change count, and a restart
// keeps that.
TEST(ResultModel, AnAcceptWithFewFiguresSinceArmsAtTheWindowNotAtTheRounds) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  config.baseline.rounds = 20;
  Life life(files, config);
  life.Plan();
  for (int i = 1; i <= 20; ++i) life.Round(1000 + 100 * i, 1.0e-7);
  ASSERT_TRUE(life.Now().baseline_complete);
  life.facts["kernel"] = "6.6.13";
  life.Observe(3050);
  life.Round(3100, 1.3e-7);
  life.Round(3200, 1.3e-7);
  (*files)[kRequestFile] = FormatRequest({"accept", "r1"});
  life.ReloadState(3300);
  EXPECT_FALSE(life.Now().baseline_complete) << "2 figures since the change are too few";
  EXPECT_DOUBLE_EQ(life.Now().baseline_progress.recorded_ratio, 2.0 / 5) << "they count towards 5, not 20";
  life.Round(3400, 1.3e-7);
  life.Stop(3450);
  Life restarted(files, config);
  restarted.Plan(3500);
  EXPECT_DOUBLE_EQ(restarted.Now().baseline_progress.recorded_ratio, 3.0 / 5) << "kept across the restart";
  restarted.Round(3600, 1.3e-7);
  restarted.Round(3700, 1.3e-7);
  EXPECT_TRUE(restarted.Now().baseline_complete) << "armed at 5 figures since the change";
  EXPECT_DOUBLE_EQ(*BaselineOf(restarted.Now(), kRemote), 1.3e-7);
}

// Without a host change the accept takes the last kWindow figures: the ones
// the drift rules' median reads.
TEST(ResultModel, AnAcceptWithoutAHostChangeTakesTheLastWindow) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  life.Round(1100, 1.0e-7);
  life.Round(1200, 1.0e-7);
  for (double t : {1300, 1400, 1500, 1600, 1700}) life.Round(t, 1.2e-7);
  (*files)[kRequestFile] = FormatRequest({"accept", "r1"});
  life.ReloadState(1800);
  EXPECT_TRUE(life.Now().baseline_complete);
  EXPECT_DOUBLE_EQ(*BaselineOf(life.Now(), kRemote), 1.2e-7);
}

// A state file that cannot be parsed is kept as a copy and replaced; one that
// cannot be read is never written over, and is restored once it can be read.
TEST(ResultModel, ACorruptFileIsKeptAndAnUnreadableOneNeverOverwritten) {
  auto files = std::make_shared<Files>();
  (*files)[kStateFile] = "{not json";
  {
    Life corrupt(files, TwoFigures());
    corrupt.Plan();
    EXPECT_EQ(corrupt.Now().baseline_origin, "state_file_corrupt");
    EXPECT_EQ((*files)["state.json.corrupt-19700101T001640Z"], "{not json");
    corrupt.Round(1100);
    corrupt.Round(1200);
    corrupt.Stop(1300);
  }
  const std::string saved = (*files)[kStateFile];
  Life blocked(files, TwoFigures());
  blocked.unreadable = true;
  blocked.Plan(2000);
  EXPECT_EQ(blocked.Now().baseline_origin, "state_file_unreadable");
  EXPECT_FALSE(blocked.Now().state_write_successful);
  blocked.Round(2100);
  blocked.Stop(2200);
  EXPECT_EQ(blocked.storage_->writes, 0) << "never written over";
  EXPECT_EQ((*files)[kStateFile], saved);
  blocked.unreadable = false;
  blocked.ReloadState(2300);
  EXPECT_EQ(blocked.Now().baseline_origin, "restored");
  EXPECT_TRUE(blocked.Now().baseline_complete);
  EXPECT_TRUE(blocked.Now().state_write_successful);
}

// What the release before wrote: its complete baseline is every series armed.
TEST(ResultModel, AFormatOneFileIsRestored) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  (*files)[kStateFile] = R"({"format": 1, "baseline": {"fingerprint": "fingerprint", "settings": ")" +
                         LegacyMeasurementSettings(config) + R"(", "created": "2026-10-01T00:00:00Z",
      "topology": ")" + TopologySignature(Nodes(2)) +
                         R"(", "facts": {"kernel": "6.1.0", "microcode": "0x1"}, "complete": true, "values": [
        {"probe": "latency", "cpu": -1, "cpu_node": 0, "mem_node": 1, "op": "", "value": 1.3e-7}]}})";
  Life life(files, config);
  life.Plan();
  EXPECT_EQ(life.Now().baseline_origin, "restored");
  EXPECT_DOUBLE_EQ(*BaselineOf(life.Now(), kRemote), 1.3e-7);
  EXPECT_EQ(life.Now().baseline_progress.armed, 1);
  EXPECT_EQ(life.Now().baseline_progress.recording, 7) << "the series the old baseline lacked record their own";
  life.Stop(1100);
  EXPECT_THAT((*files)[kStateFile], HasSubstr("\"format\": 2"));
}

// A series that joins the plan later records its own baseline; its arrival
// is a host change; the others stay armed.
TEST(ResultModel, ASeriesAddedLaterIsAHostChange) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  Life life(files, config);
  life.Plan();
  life.Round(1100);
  life.Round(1200);
  Config more = config;
  more.probes.Of<BandwidthConfig>().ops.push_back(k::BandwidthOp::kWrite);
  life.Reconfigure(more, 1300);
  const Snapshot s = life.Now();
  EXPECT_EQ(s.baseline_progress.armed, 8);
  EXPECT_EQ(s.baseline_progress.recording, 4);
  EXPECT_EQ(s.baseline_origin, "first_start");
  ASSERT_EQ(s.host_changes.size(), 1u);
  EXPECT_EQ(s.host_changes[0].field, "planned_series");
  EXPECT_EQ(s.host_changes[0].before, "8");
  EXPECT_EQ(s.host_changes[0].after, "12");
}

// The confirmation rule against the armed baseline (series_history.h): a
// figure beyond the band while the median is inside.
TEST(ResultModel, AFigureBeyondItsBandIsConfirmed) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  for (int r = 0; r < 5; ++r) EXPECT_FALSE(life.Round(1100 + r, 1e-7)) << "nothing to confirm while recording";
  const Task remote{&LatencyProbe(), MemoryTarget({1, 0, 1, true})};
  EXPECT_FALSE(life.Land(remote, 1200, 1.04e-7)) << "inside the band";
  EXPECT_TRUE(life.Land(remote, 1300, 1.2e-7)) << "beyond it";
  Task confirmation = remote;
  confirmation.confirmation = true;
  EXPECT_FALSE(life.Land(confirmation, 1310, 1.2e-7)) << "a confirmation is never confirmed";
}

TEST(ResultModel, MemoryErrorsAreCountedFromTheBaseline) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.errors = MemoryErrorCounts{10, 1};
  life.Plan();
  life.errors = MemoryErrorCounts{13, 1};
  life.Observe(1100);
  const Snapshot s = life.Now();
  ASSERT_TRUE(s.memory_errors_since_baseline);
  EXPECT_EQ(s.memory_errors_since_baseline->corrected, 3u);
  EXPECT_EQ(s.memory_errors_since_baseline->uncorrected, 0u);
  const auto change = std::find_if(s.host_changes.begin(), s.host_changes.end(),
                                   [](const HostChange& c) { return c.field == "memory_errors_since_baseline"; });
  ASSERT_NE(change, s.host_changes.end());
  EXPECT_EQ(change->after, "corrected");
}

TEST(ResultModel, HostChangesAreBoundedToTheMostRecent) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  life.Plan();
  for (int i = 0; i < 40; ++i) {
    life.facts["microcode"] = "0x" + std::to_string(i + 2);
    life.Observe(1100 + i);
  }
  ASSERT_EQ(life.Now().host_changes.size(), kMaxHostChanges);
  EXPECT_EQ(life.Now().host_changes.back().after, "0x41");
}

// Every event is one publication, a state write it makes due included (a
// run that saved used to publish twice: once for the run, once for the write).
TEST(ResultModel, EachEventPublishesOnceAlsoWhenItSaves) {
  auto files = std::make_shared<Files>();
  Life life(files, TwoFigures());
  std::uint64_t published = life.Publications();
  life.Plan(1000);
  EXPECT_EQ(life.Publications(), ++published) << "the plan, with its first write";
  const Task task = life.Tasks()[0];
  int writes = life.storage_->writes;

  life.Land(task, 1001, 1e-7);
  EXPECT_EQ(life.storage_->writes, writes) << "within kSaveSpacingNs of the last write: not due";
  EXPECT_EQ(life.Publications(), ++published);

  life.Land(task, 1040, 1e-7);
  EXPECT_EQ(life.storage_->writes, ++writes) << "the run made a write due";
  EXPECT_EQ(life.Publications(), ++published) << "a run that saves publishes once";

  life.read_only = true;
  life.Land(task, 1080, 1e-7);
  EXPECT_EQ(life.storage_->writes, ++writes);
  EXPECT_EQ(life.Publications(), ++published) << "a run whose write fails publishes once";
  EXPECT_FALSE(life.Now().state_write_successful) << "and that one publication says so";
  EXPECT_EQ(life.Now().state_write_failures_total, 1u);

  life.Observe(1100);
  EXPECT_EQ(life.Publications(), ++published);
  life.ReloadState(1200);
  EXPECT_EQ(life.Publications(), ++published);
  life.Plan(1300);
  EXPECT_EQ(life.Publications(), ++published);

  // The scheduler's own events: each one publication, of what it says.
  life.model().DutyObserved(0.004);
  EXPECT_EQ(life.Publications(), ++published);
  EXPECT_EQ(life.Now().duty_cycle_ratio, 0.004);
  life.model().LockWaited(3, std::nullopt);
  EXPECT_EQ(life.Publications(), ++published);
  EXPECT_EQ(life.Now().probe_lock_wait_seconds, 3);
  const std::uint64_t rounds = life.Now().rounds_completed;
  life.model().RoundEnded(RefreshOf{60, 600, {}, {}}, 10);
  EXPECT_EQ(life.Publications(), ++published);
  EXPECT_EQ(life.Now().rounds_completed, rounds + 1);
  EXPECT_EQ(life.Now().rotation_rounds, 10);
  EXPECT_EQ(life.Now().refresh_interval_seconds, 600);
  // A run that waited publishes its total wait and no holder, with its figure.
  life.model().LockWaited(5, ProbeLockHolder{});
  ++published;
  EXPECT_TRUE(life.Now().probe_lock_holder.has_value());
  life.Land(task, 1310, 1e-7, k::Outcome::kOk, LoopFacts{0.005, 7});
  EXPECT_EQ(life.Publications(), ++published);
  EXPECT_EQ(life.Now().probe_lock_wait_seconds, 7);
  EXPECT_FALSE(life.Now().probe_lock_holder.has_value());
  EXPECT_EQ(life.Now().duty_cycle_ratio, 0.005);

  // A save alone publishes only what changes the snapshot: the directory
  // writable again, then nothing left to write.
  life.read_only = false;
  life.Land(task, 1400, 1e-7);
  ++published;
  EXPECT_TRUE(life.Now().state_write_successful);
  life.Stop(1500);
  EXPECT_EQ(life.Publications(), published) << "nothing to write: nothing to publish";
}

// The budget the scheduler uses is the model's to publish: no replan (start,
// reload, cpuset change) sets it back to schedule.duty_cycle.
TEST(ResultModel, TheBudgetInUseOutlivesEveryReplan) {
  auto files = std::make_shared<Files>();
  Config config = TwoFigures();
  config.schedule.duty_cycle = 0.01;
  config.schedule.learning_duty_cycle = 0.05;
  Life life(files, config);
  life.Plan(1000);
  EXPECT_DOUBLE_EQ(life.Now().duty_cycle_budget_ratio, 0.01) << "before the scheduler says";
  const std::uint64_t published = life.Publications();
  life.model().UseBudget(0.05);
  EXPECT_EQ(life.Publications(), published + 1);
  EXPECT_DOUBLE_EQ(life.Now().duty_cycle_budget_ratio, 0.05);
  config.schedule.interval = std::chrono::seconds(31);
  life.Reconfigure(config, 1100);  // a reload: Reconfigure, then Plan
  EXPECT_DOUBLE_EQ(life.Now().duty_cycle_budget_ratio, 0.05);
  life.Observe(1200);
  life.Round(1300);
  EXPECT_DOUBLE_EQ(life.Now().duty_cycle_budget_ratio, 0.05);
}

}  // namespace
}  // namespace numaprobe::daemon
