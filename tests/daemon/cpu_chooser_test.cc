// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/probing/cpu_chooser.cc on the 2-socket NPS2 fixture
// (node 0 = CPUs 0-7, SMT pairs (0,1) (2,3) (4,5) (6,7)), with /proc/stat
// snapshots and isolated-CPU lists supplied by the test.
#include "daemon/probing/cpu_chooser.h"
#include "tests/daemon/topology_fixture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace numaprobe::daemon {
namespace {

using kernels::CpuTimes;
using kernels::Topology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Sources whose two snapshots 100 ticks apart make each CPU in `busy` that
// busy (share in [0, 1]) and every other CPU of 0-31 idle.
CpuChooserSources Busy(const std::map<int, double>& busy, const std::string& isolated = "") {
  CpuChooserSources sources;
  auto calls = std::make_shared<int>(0);
  sources.read_times = [busy, calls] {
    const unsigned long long tick = static_cast<unsigned long long>((*calls)++) * 100;
    CpuTimes times;
    for (int cpu = 0; cpu < 32; ++cpu) {
      const auto it = busy.find(cpu);
      const double share = it == busy.end() ? 0.0 : it->second;
      times[cpu] = {static_cast<unsigned long long>(share * static_cast<double>(tick)) + 1000, tick + 5000};
    }
    return times;
  };
  sources.window = std::chrono::milliseconds(0);
  if (!isolated.empty()) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("numaprobe_isolated_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::ofstream(path) << isolated << "\n";
    sources.isolated = path.string();
  } else {
    sources.isolated = "/nonexistent/isolated";
  }
  sources.nohz_full = "/nonexistent/nohz_full";
  return sources;
}

MemoryPair PlannedPair() { return {7, 0, 0, true}; }  // what BuildPlan makes for node 0

TEST(CpuChooserTest, QuietNodeKeepsThePlannedCpu) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({}));
  const CpuChoice choice = chooser.Choose(PlannedPair(), 1);
  EXPECT_THAT(choice.cpus, ElementsAre(7));
  EXPECT_THAT(choice.why, IsEmpty());
}

TEST(CpuChooserTest, BusyPlannedCpuMovesToAnIdleCoreOfTheSameNode) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({{7, 1.0}}));
  const CpuChoice choice = chooser.Choose(PlannedPair(), 1);
  // Not 6: it shares a core with the busy 7. The highest idle core's CPU is 5.
  EXPECT_THAT(choice.cpus, ElementsAre(5));
  EXPECT_THAT(choice.why, HasSubstr("cpu 7 busy 100%"));
}

TEST(CpuChooserTest, SlightlyBusyPlannedCpuIsKept) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({{7, 0.05}}));
  EXPECT_THAT(chooser.Choose(PlannedPair(), 1).cpus, ElementsAre(7));
}

TEST(CpuChooserTest, NeverAnotherNodesCpuEvenIfTheWholeNodeIsBusy) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  std::map<int, double> busy;
  for (int cpu = 0; cpu < 8; ++cpu) busy[cpu] = 1.0;
  busy[2] = 0.6;
  CpuChooser chooser(topology, Busy(busy));
  const CpuChoice choice = chooser.Choose(PlannedPair(), 1);
  EXPECT_THAT(choice.cpus, ElementsAre(2));  // the least busy of node 0; CPUs 8-31 are idle but elsewhere
}

TEST(CpuChooserTest, OperatorNamedCpuIsNeverMoved) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({{7, 1.0}}));
  const MemoryPair named{7, 0, 0, false};
  EXPECT_THAT(chooser.Choose(named, 1).cpus, ElementsAre(7));
}

TEST(CpuChooserTest, IsolatedCpusAreNeverChosen) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({}, "5-7"));
  const CpuChoice choice = chooser.Choose(PlannedPair(), 3);
  EXPECT_THAT(choice.cpus, ElementsAre(4, 3, 1));  // helpers on other cores (SMT pairs (2,3), (0,1))
  EXPECT_THAT(choice.why, HasSubstr("cpu 7 is isolated or nohz_full"));
}

TEST(CpuChooserTest, HelpersTakeIdleDistinctCoresBeforeSiblings) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooser chooser(topology, Busy({{7, 1.0}, {3, 0.9}}));
  // 5 measures; helpers on the other fully idle core (1), then idle siblings
  // of our own threads (4, 0) before CPUs beside the busy 3 and 7.
  EXPECT_THAT(chooser.Choose(PlannedPair(), 4).cpus, ElementsAre(5, 1, 4, 0));
  // A named CPU stays first; helpers still avoid the busy ones.
  EXPECT_THAT(chooser.Choose({7, 0, 0, false}, 2).cpus, ElementsAre(7, 5));
}

TEST(CpuChooserTest, UnreadableCountersKeepThePlannedCpu) {
  const Topology topology = TopologyFixture("2s_nps2_cxl.xml");
  CpuChooserSources sources = Busy({});
  sources.read_times = [] { return CpuTimes{}; };
  CpuChooser chooser(topology, sources);
  EXPECT_THAT(chooser.Choose(PlannedPair(), 1).cpus, ElementsAre(7));
}

TEST(CpuIdleTest, BusyFractionsFromProcStatText) {
  const auto path = std::filesystem::temp_directory_path() / "numaprobe_proc_stat_test";
  std::ofstream(path) << "cpu  10 0 10 100 0 0 0 0 0 0\n"
                         "cpu0 5 0 5 50 0 0 0 0 0 0\n"
                         "cpu1 5 0 5 50 0 0 0 0 0 0\n"
                         "intr 1 2 3\n";
  const CpuTimes before = kernels::ReadCpuTimes(path.string());
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before.at(0).busy, 10u);
  EXPECT_EQ(before.at(0).total, 60u);
  std::ofstream(path) << "cpu  0 0 0 0 0 0 0 0 0 0\n"
                         "cpu0 15 0 5 50 0 0 0 0 0 0\n"  // +10 busy of +10
                         "cpu1 5 0 5 60 0 0 0 0 0 0\n";  // +10 idle of +10
  const auto busy = kernels::BusyFractions(before, kernels::ReadCpuTimes(path.string()));
  EXPECT_DOUBLE_EQ(busy.at(0), 1.0);
  EXPECT_DOUBLE_EQ(busy.at(1), 0.0);
  EXPECT_TRUE(kernels::ReadCpuTimes("/nonexistent/stat").empty());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace numaprobe::daemon
