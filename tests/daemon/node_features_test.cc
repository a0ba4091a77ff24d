// SPDX-License-Identifier: Apache-2.0
// Unit tests for the Node Feature Discovery features (daemon/output/node_features.h)
// and the export that keeps their file (daemon/serve/node_feature_export.h):
// which figures each feature is, worked by hand; the file's format as NFD's
// local source reads it (expiry directive, namespace, `# +no-label` before
// each raw feature); when the export writes, and what a missing directory,
// a directory that is a file and a reload to another directory do.
#include "daemon/output/node_features.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/serve/node_feature_export.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;
using kernels::BandwidthOp;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

NodeFeature Label(std::string name, std::string value) { return {std::move(name), std::move(value), true}; }
NodeFeature Raw(std::string name, std::string value) { return {std::move(name), std::move(value), false}; }

// Two CPU nodes with memory and a CPU-less node 2: latency from both, peak
// read bandwidth to each node's own memory and across.
std::vector<RecordPtr> TwoSocketsAndAnExpander() {
  return {MakeLatencyFigure(0, 0, 90.4e-9), MakeLatencyFigure(0, 1, 140e-9), MakeLatencyFigure(0, 2, 250e-9),
          MakeLatencyFigure(1, 1, 95e-9), MakeLatencyFigure(1, 0, 150e-9),
          MakePeakFigure(0, 0, BandwidthOp::kRead, 100e9), MakePeakFigure(0, 1, BandwidthOp::kRead, 60e9),
          MakePeakFigure(1, 1, BandwidthOp::kRead, 90e9), MakePeakFigure(1, 0, BandwidthOp::kRead, 63e9),
          // Write figures and one-thread figures are not what the features are.
          MakePeakFigure(0, 1, BandwidthOp::kWrite, 1e9)};
}

TEST(NodeFeaturesTest, EachFeatureIsTheHostsWorstFigureInWholeUnits) {
  EXPECT_THAT(NodeFeaturesOf(TwoSocketsAndAnExpander(), true),
              ElementsAre(Label("latency-local-ns", "95"),           // node 1's own memory is the slower local
                          Label("latency-remote-worst-ns", "250"),   // node 0 to the expander
                          Label("latency-remote-local-pct", "277"),  // 250 / 90.4 = 2.765 (node 1's is 150 / 95 = 1.58)
                          Label("bandwidth-local-mbps", "90000"),    // node 1's own memory
                          Label("bandwidth-remote-worst-mbps", "60000"),
                          Label("bandwidth-remote-local-pct", "60"),  // 60 / 100 (node 1's is 63 / 90 = 0.70)
                          Label("drift-alerts-armed", "true"),
                          // 10 x remote / local, rounded: 140 / 90.4 = 1.549, 250 / 90.4 = 2.765, 150 / 95 = 1.579.
                          Raw("distance-0-0", "10"), Raw("distance-0-1", "15"), Raw("distance-0-2", "28"),
                          Raw("distance-1-0", "16"), Raw("distance-1-1", "10")));
}

TEST(NodeFeaturesTest, PerCpuModeTakesAPairsSlowestCpu) {
  kernels::LatencyResult slow;
  slow.seconds_per_load.median = 120e-9;
  const std::vector<RecordPtr> records = {MakeLatencyFigure(0, 0, 100e-9), MakeLatency({1, 0, 0}, slow)};
  EXPECT_THAT(NodeFeaturesOf(records, false),
              ElementsAre(Label("latency-local-ns", "120"), Label("drift-alerts-armed", "false"),
                          Raw("distance-0-0", "10")));
}

TEST(NodeFeaturesTest, AFeatureWithoutItsFiguresIsLeftOutNotGuessed) {
  // Nothing measured yet: only whether the alerts are armed.
  EXPECT_THAT(NodeFeaturesOf({}, false), ElementsAre(Label("drift-alerts-armed", "false")));
  // A remote latency from a CPU node whose own memory has no figure (a
  // CPU-only node): the worst remote is known, its ratio and distance are not.
  EXPECT_THAT(NodeFeaturesOf({MakeLatencyFigure(3, 0, 200e-9)}, false),
              ElementsAre(Label("latency-remote-worst-ns", "200"), Label("drift-alerts-armed", "false")));
  // A failed record is no figure.
  kernels::LatencyResult failed;
  failed.outcome = kernels::Outcome::kPlacementMismatch;
  failed.seconds_per_load.median = 1e-9;
  EXPECT_THAT(NodeFeaturesOf({MakeLatency({0, 0, 0}, failed)}, true), ElementsAre(Label("drift-alerts-armed", "true")));
}

TEST(NodeFeaturesTest, TheFileIsWhatNfdsLocalSourceReads) {
  const std::string text =
      NodeFeatureFileText({Label("latency-local-ns", "95"), Raw("distance-0-1", "15")}, 1'796'663'400.9);
  std::istringstream lines(text);
  std::vector<std::string> features;
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("# ") || line.starts_with("# +")) features.push_back(line);
  }
  // The expiry first (it applies to the lines after it), UTC, whole seconds.
  EXPECT_THAT(features, ElementsAre("# +expiry-time=2026-12-07T17:10:00Z", "numaprobe.io/latency-local-ns=95",
                                    "# +no-label", "numaprobe.io/distance-0-1=15"));
  EXPECT_EQ(text.back(), '\n');
}

// ------------------------------------------------------------- the export

class NodeFeatureExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "numaprobe_features_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A snapshot after its first round with one local latency figure.
  void PublishRound(double latency_seconds, double refresh_seconds = 300) {
    store_.Update([&](Snapshot& s) {
      s.rounds_completed = 1;
      s.refresh_interval_seconds = refresh_seconds;
      s.figures = {Timed{MakeLatencyFigure(0, 0, latency_seconds), 1}};
    });
  }
  std::string FileText() const {
    std::ifstream in(fs::path(dir_) / NodeFeatureExport::kFileName);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static std::int64_t Ns(double seconds) { return static_cast<std::int64_t>(seconds * 1e9); }

  std::string dir_;
  ResultStore store_;
  NodeFeatureExport exporter_{store_};
  static constexpr double kNow = 1'796'661'600;  // 2026-12-07T16:40:00Z
};

TEST_F(NodeFeatureExportTest, OffWritesNothingAndWaitsOnlyForSignals) {
  PublishRound(90e-9);
  EXPECT_EQ(exporter_.Tick("", kNow, Ns(10)), std::nullopt);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NodeFeatureExportTest, WritesAfterTheFirstRoundWithAnExpiryOfThreeRefreshes) {
  EXPECT_EQ(exporter_.Tick(dir_, kNow, Ns(10)), NodeFeatureExport::kUntilReady);
  EXPECT_TRUE(fs::is_empty(dir_));  // no round yet: no file that would drop a restarted daemon's labels

  PublishRound(90e-9);
  EXPECT_EQ(exporter_.Tick(dir_, kNow, Ns(20)), NodeFeatureExport::kCheck);
  const std::string text = FileText();
  EXPECT_THAT(text, HasSubstr("# +expiry-time=2026-12-07T16:55:00Z\n"));  // now + 3 x 300 s
  EXPECT_THAT(text, HasSubstr("\nnumaprobe.io/latency-local-ns=90\n"));
  // World-readable (NFD's worker may run as another user), and only the file:
  // the temp file, a dot file NFD skips anyway, is gone.
  struct stat st {};
  ASSERT_EQ(::stat((fs::path(dir_) / NodeFeatureExport::kFileName).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  EXPECT_TRUE(store_.Current()->node_features_write_successful);
}

TEST_F(NodeFeatureExportTest, RewritesWhenTheFeaturesChangeAndOncePerRefreshInterval) {
  PublishRound(90e-9, 600);
  exporter_.Tick(dir_, kNow, Ns(0));
  const std::string first = FileText();

  // Unchanged, within the refresh interval: the file stays as it is.
  exporter_.Tick(dir_, kNow + 30, Ns(30));
  EXPECT_EQ(FileText(), first);
  // A new figure: written at once.
  PublishRound(99e-9, 600);
  exporter_.Tick(dir_, kNow + 60, Ns(60));
  EXPECT_THAT(FileText(), HasSubstr("latency-local-ns=99\n"));
  // Unchanged for a whole refresh interval: rewritten with a later expiry,
  // so that a running daemon's labels never lapse.
  exporter_.Tick(dir_, kNow + 660, Ns(660));
  EXPECT_THAT(FileText(), HasSubstr("# +expiry-time=2026-12-07T17:21:00Z\n"));  // 16:51 + 3 x 600 s
}

TEST_F(NodeFeatureExportTest, AFailedWriteIsCountedShownAndRetriedNotFatal) {
  PublishRound(90e-9);
  const std::string missing = dir_ + "/features.d";
  EXPECT_EQ(exporter_.Tick(missing, kNow, Ns(0)), NodeFeatureExport::kCheck);
  EXPECT_FALSE(fs::exists(missing));  // NFD's directory is never created
  EXPECT_FALSE(store_.Current()->node_features_write_successful);
  EXPECT_EQ(store_.Current()->node_features_write_failures_total, 1u);
  // Each retry counts, even within the refresh interval.
  exporter_.Tick(missing, kNow + 30, Ns(30));
  EXPECT_EQ(store_.Current()->node_features_write_failures_total, 2u);
  // The directory appears (NFD installed later): the next check writes.
  fs::create_directory(missing);
  exporter_.Tick(missing, kNow + 60, Ns(60));
  EXPECT_TRUE(fs::exists(fs::path(missing) / NodeFeatureExport::kFileName));
  EXPECT_TRUE(store_.Current()->node_features_write_successful);
  EXPECT_EQ(store_.Current()->node_features_write_failures_total, 2u);
}

TEST_F(NodeFeatureExportTest, ADirectoryThatIsAFileFailsWithoutTouchingIt) {
  PublishRound(90e-9);
  const std::string file = dir_ + "/not-a-directory";
  std::ofstream(file) << "keep me\n";
  exporter_.Tick(file, kNow, Ns(0));
  EXPECT_EQ(store_.Current()->node_features_write_failures_total, 1u);
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me\n");
}

TEST_F(NodeFeatureExportTest, AReloadToAnotherDirectoryOrOffTakesTheFileAway) {
  PublishRound(90e-9);
  const std::string other = dir_ + "/other";
  fs::create_directory(other);
  exporter_.Tick(dir_, kNow, Ns(0));
  ASSERT_TRUE(fs::exists(fs::path(dir_) / NodeFeatureExport::kFileName));
  exporter_.Tick(other, kNow + 1, Ns(1));
  EXPECT_FALSE(fs::exists(fs::path(dir_) / NodeFeatureExport::kFileName));
  EXPECT_TRUE(fs::exists(fs::path(other) / NodeFeatureExport::kFileName));
  EXPECT_EQ(exporter_.Tick("", kNow + 2, Ns(2)), std::nullopt);
  EXPECT_FALSE(fs::exists(fs::path(other) / NodeFeatureExport::kFileName));
}

}  // namespace
}  // namespace numaprobe::daemon
