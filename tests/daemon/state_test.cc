// Unit tests for daemon/serve/state.cc: the host fingerprint and facts, and
// the files of the state directory, written atomically (the text they hold is
// results/state_file.cc's: state_file_test.cc).
#include "daemon/serve/state.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;
using kernels::PagePolicy;
using kernels::Topology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

Topology Synthetic(const std::string& description) {
  auto topology = Topology::FromSynthetic(description, {});
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.failure().reason);
  return topology.ok() ? std::move(topology).value() : Topology{};
}

Topology Xml(const std::string& xml) {
  auto topology = Topology::FromXml(xml, {});
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.failure().reason);
  return topology.ok() ? std::move(topology).value() : Topology{};
}

std::string FixtureXml() { return ReadText(fs::path(NUMAPROBE_FIXTURES) / "topology" / "2s_nps2_cxl.xml"); }

HostInfo Host() {
  HostInfo host;
  host.cpu_model = "Test CPU";
  host.microcode = "0x1";
  host.kernel = "6.1.0";
  return host;
}

TEST(HostFingerprintTest, PinnedForAKnownHost) {
  // Pinned: a change of the canonical string or the hash silently starts a new
  // baseline on every host of a fleet, so it must be a deliberate one.
  EXPECT_EQ(HostFingerprint(Host(), Xml(FixtureXml()), PagePolicy::kAuto), "8c892c03bfb70190");
}

TEST(HostFingerprintTest, StableForTheSameInput) {
  const std::string a = HostFingerprint(Host(), Synthetic("pack:2 [numa] core:2 pu:1"), PagePolicy::kAuto);
  const std::string b = HostFingerprint(Host(), Synthetic("pack:2 [numa] core:2 pu:1"), PagePolicy::kAuto);
  EXPECT_EQ(a, b);
  EXPECT_THAT(a, MatchesRegex("[0-9a-f]{16}"));
}

TEST(HostFingerprintTest, ChangesWithEveryComponent) {
  const Topology two_nodes = Synthetic("pack:2 [numa] core:2 pu:1");
  const std::string base = HostFingerprint(Host(), two_nodes, PagePolicy::kAuto);

  HostInfo model = Host();
  model.cpu_model = "Other CPU";
  EXPECT_NE(HostFingerprint(model, two_nodes, PagePolicy::kAuto), base) << "cpu model";
  HostInfo microcode = Host();
  microcode.microcode = "0x2";
  EXPECT_NE(HostFingerprint(microcode, two_nodes, PagePolicy::kAuto), base) << "microcode";
  HostInfo kernel = Host();
  kernel.kernel = "6.1.1";
  EXPECT_NE(HostFingerprint(kernel, two_nodes, PagePolicy::kAuto), base) << "kernel";
  EXPECT_NE(HostFingerprint(Host(), Synthetic("pack:3 [numa] core:2 pu:1"), PagePolicy::kAuto), base) << "node count";
  EXPECT_NE(HostFingerprint(Host(), two_nodes, PagePolicy::kSmall), base) << "page policy";

  // Facts that do not change the figures do not change the fingerprint.
  HostInfo thp = Host();
  thp.thp = "never";
  EXPECT_EQ(HostFingerprint(thp, two_nodes, PagePolicy::kAuto), base);
}

TEST(HostFingerprintTest, ChangesWithADistance) {
  std::string xml = FixtureXml();
  const std::string row = "<u64values length=\"30\">10 12 32 32 20 ";
  const auto at = xml.find(row);
  ASSERT_NE(at, std::string::npos);
  const std::string base = HostFingerprint(Host(), Xml(xml), PagePolicy::kAuto);
  xml.replace(at, row.size(), "<u64values length=\"30\">10 13 32 32 20 ");  // distance 0 -> 1
  const Topology edited = Xml(xml);
  ASSERT_EQ(edited.Distance(0, 1), 13);
  EXPECT_NE(HostFingerprint(Host(), edited, PagePolicy::kAuto), base);
}

// A cpuset.mems change is not another host: the baseline must survive it.
TEST(HostFingerprintTest, SameWhateverNodesThisProcessMayUse) {
  const Topology all = Xml(FixtureXml());
  ASSERT_GE(all.nodes().size(), 2u);
  kernels::Restriction only_node0;
  only_node0.mem_nodes = std::set<int>{0};
  auto restricted = Topology::FromXml(FixtureXml(), only_node0);
  ASSERT_TRUE(restricted.ok()) << restricted.failure().reason;
  ASSERT_LT(restricted->nodes().size(), all.nodes().size()) << "the restriction did not take";
  EXPECT_EQ(HostFingerprint(Host(), restricted.value(), PagePolicy::kAuto),
            HostFingerprint(Host(), all, PagePolicy::kAuto));
}

class StateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "numaprobe_state_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    dir_ = (root_ / "state").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    if (fs::exists(dir_)) fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    return names;
  }

  static std::string Sample() { return "{\"format\": 2}\n"; }

  fs::path root_;
  std::string dir_;
};

TEST_F(StateTest, MissingFileIsNotAnError) {
  const StoredText stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kMissing);
  EXPECT_EQ(stored.text, "");
}

TEST_F(StateTest, WriteThenReadRoundTrips) {
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");  // creates the directory
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);
  const StoredText stored = ReadStateFile(dir_, "state.json");
  ASSERT_EQ(stored.status, StoredText::Status::kOk) << stored.error;
  EXPECT_EQ(stored.text, Sample());
}

TEST_F(StateTest, AtomicWriteLeavesNoTemporaryFiles) {
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");  // replacing an existing file
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

// A writer SIGKILLed mid-write leaves its temp file (tests/integration/
// test_state_kill.py makes them); the next successful write removes those of
// dead processes and keeps a live writer's.
TEST_F(StateTest, SuccessfulWriteRemovesTempFilesOfDeadWriters) {
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);  // reaped: the pid names no process now
  std::ofstream(fs::path(dir_) / (".state.json.tmp." + std::to_string(dead))) << "{\"trunc";
  std::ofstream(fs::path(dir_) / (".state.json.tmp." + std::to_string(getppid()))) << "{";  // alive
  std::ofstream(fs::path(dir_) / ".state.json.tmp.notapid") << "{";
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");
  EXPECT_THAT(Entries(), ::testing::UnorderedElementsAre(".state.json.tmp." + std::to_string(getppid()),
                                                         ".state.json.tmp.notapid", "state.json"));
}

TEST_F(StateTest, FailedRenameRemovesTheTemporaryFile) {
  // A non-empty directory named state.json cannot be renamed over.
  fs::create_directories(fs::path(dir_) / "state.json" / "keep");
  const std::string error = WriteStateFile(dir_, "state.json", Sample());
  EXPECT_THAT(error, HasSubstr(dir_ + "/state.json"));
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

// Unreadable is not corrupt: the caller must never write over a file it
// merely could not read.
TEST_F(StateTest, UnreadableFileIsUnreadableNamingThePath) {
  fs::create_directories(fs::path(dir_) / "state.json");  // read() fails with EISDIR
  const StoredText stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kUnreadable);
  EXPECT_THAT(stored.error, HasSubstr(dir_ + "/state.json"));
}

TEST_F(StateTest, DirectoryUnderARegularFileIsAnErrorNamingThePath) {
  // Works as root too, where permission bits do not stop a write: ENOTDIR.
  const std::string file = (root_ / "plainfile").string();
  WriteText(file, "x");
  const std::string dir = file + "/sub";
  const std::string error = WriteStateFile(dir, "state.json", Sample());
  EXPECT_THAT(error, HasSubstr(dir));
  EXPECT_THAT(error, HasSubstr("Not a directory"));
  EXPECT_EQ(ReadStateFile(dir, "state.json").status, StoredText::Status::kMissing) << "no file can be there";
}

TEST_F(StateTest, ReadOnlyDirectoryIsAnErrorNamingThePath) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string error = WriteStateFile(dir_, "state.json", Sample());
  EXPECT_THAT(error, HasSubstr(dir_));
  EXPECT_THAT(error, HasSubstr("Permission denied"));
}

TEST_F(StateTest, RemoveIsQuietWhenThereIsNothing) {
  EXPECT_EQ(RemoveStateFile(dir_, "baseline-request.json"), "");
  ASSERT_EQ(WriteStateFile(dir_, "baseline-request.json", "{}"), "");
  EXPECT_EQ(RemoveStateFile(dir_, "baseline-request.json"), "");
  EXPECT_THAT(Entries(), IsEmpty());
}

// A corrupt file is kept for the operator before it is replaced, the newest
// three copies at most.
TEST_F(StateTest, CorruptCopiesAreKeptThreeAtMost) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_EQ(WriteStateFile(dir_, "state.json", "garbage " + std::to_string(i)), "");
    ASSERT_EQ(KeepCorruptCopy(dir_, "state.json", "2026010" + std::to_string(i) + "T000000Z"), "");
  }
  EXPECT_THAT(Entries(), ::testing::UnorderedElementsAre("state.json.corrupt-20260103T000000Z",
                                                         "state.json.corrupt-20260104T000000Z",
                                                         "state.json.corrupt-20260105T000000Z"));
  EXPECT_EQ(ReadText(fs::path(dir_) / "state.json.corrupt-20260105T000000Z"), "garbage 5");
  EXPECT_EQ(KeepCorruptCopy(dir_, "state.json", "20260106T000000Z"), "") << "nothing to keep: no error";
}

TEST(HostFactsTest, TopologySignatureNamesNodesAndDistances) {
  // hwloc's synthetic topologies carry no SLIT: the distances read 0 there.
  EXPECT_EQ(TopologySignature(Synthetic("pack:2 [numa] core:2 pu:1")), "nodes=0,1;distances=0,0,0,0");
  EXPECT_NE(TopologySignature(Synthetic("pack:4 [numa] core:2 pu:1")),
            TopologySignature(Synthetic("pack:2 [numa] core:2 pu:1")));
  HostInfo host = Host();
  const auto facts = HostFacts(host, PagePolicy::kAuto, "1.2.3");
  EXPECT_EQ(facts.at("kernel"), "6.1.0");
  EXPECT_EQ(facts.at("firmware"), "unknown");
  EXPECT_EQ(facts.at("numaprobe_version"), "1.2.3");
  EXPECT_TRUE(facts.contains("hypervisor"));
  EXPECT_TRUE(facts.contains("nodes_per_package"));
  EXPECT_EQ(facts.size(), 8u);
}

}  // namespace
}  // namespace numaprobe::daemon
