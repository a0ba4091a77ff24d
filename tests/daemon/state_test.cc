// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/serve/state.cc: the host fingerprint and facts, and
// the files of the state directory, written atomically (the text they hold is
// results/state_file.cc's: state_file_test.cc).
#include "daemon/serve/state.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
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

TEST_F(StateTest, ADirectoryAtTheFileIsNotReplacedAndNoTemporaryFileIsLeft) {
  // A non-empty directory named state.json could not be renamed over anyway.
  fs::create_directories(fs::path(dir_) / "state.json" / "keep");
  const std::string error = WriteStateFile(dir_, "state.json", Sample());
  EXPECT_THAT(error, HasSubstr(dir_ + "/state.json"));
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

// A directory, a FIFO, a link or an oversized file cannot be a state file:
// refused, naming what it is, so that the model keeps it as a copy and
// replaces it; read promptly (a FIFO never blocks, /dev/zero is not read).
TEST_F(StateTest, HostileFilesAreRefusedNamingTheProblem) {
  fs::create_directories(fs::path(dir_) / "state.json");
  const std::string path = dir_ + "/state.json";
  StoredText stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kRefused);
  EXPECT_EQ(stored.error, "cannot read " + path + ": it is a directory, not a regular file");
  fs::remove(path);

  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  stored = ReadStateFile(dir_, "state.json");  // returns: no writer ever comes
  EXPECT_EQ(stored.status, StoredText::Status::kRefused);
  EXPECT_EQ(stored.error, "cannot read " + path + ": it is a FIFO, not a regular file");
  fs::remove(path);

  fs::create_symlink("/dev/zero", path);
  stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kRefused);
  EXPECT_EQ(stored.error, "cannot read " + path + ": it is a symbolic link, which is not followed here");
  fs::remove(path);

  WriteText(path, "{}");
  fs::resize_file(path, 16 * 1024 * 1024 + 1);
  stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kRefused);
  EXPECT_EQ(stored.error, "cannot read " + path + ": it is larger than the 16 MiB limit");
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

// The privilege escalation this guards against: root's `numaprobe baseline reset` (or a daemon run
// as root) wrote through a link the state directory's owner planted at the
// predictable temp name, and chowned the target to that owner. A link at
// every name a writer could predict: the temp names of the pids around ours
// (the old scheme and the new prefix), the corrupt copy's names for the next
// minute, state.json and the request file themselves. No write, truncation or
// chown may reach the target; the files end up new regular files.
TEST_F(StateTest, NoWriteFollowsALinkPlantedAtAPredictableName) {
  fs::create_directories(dir_);
  const fs::path victim = root_ / "victim";
  WriteText(victim, "precious");
  ::chmod(victim.c_str(), 0600);
  const pid_t self = ::getpid();
  for (const char* name : {"state.json", "baseline-request.json"}) {
    for (pid_t pid = std::max(1, self - 200); pid < self + 200; ++pid) {
      const std::string temp = fmt::format(".{}.tmp.{}", name, pid);
      fs::create_symlink(victim, fs::path(dir_) / temp);
      fs::create_symlink(victim, fs::path(dir_) / (temp + ".0000000000000000"));
    }
  }
  const auto now = std::chrono::system_clock::now();
  for (int second = 0; second < 60; ++second) {
    const std::time_t t = std::chrono::system_clock::to_time_t(now + std::chrono::seconds(second));
    std::tm utc{};
    gmtime_r(&t, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
    fs::create_symlink(victim, fs::path(dir_) / (std::string("state.json.corrupt-") + stamp));
  }
  fs::create_symlink(victim, fs::path(dir_) / "state.json");
  fs::create_symlink(victim, fs::path(dir_) / "baseline-request.json");
  struct stat before {};
  ASSERT_EQ(::stat(victim.c_str(), &before), 0);

  EXPECT_EQ(ReadStateFile(dir_, "state.json").status, StoredText::Status::kRefused);
  ASSERT_EQ(KeepCorruptCopy(dir_, "state.json", "20260101T000000Z"), "");
  ASSERT_EQ(WriteStateFile(dir_, "state.json", Sample()), "");
  ASSERT_EQ(WriteStateFile(dir_, "baseline-request.json", "{}"), "");
  ASSERT_EQ(RemoveStateFile(dir_, "baseline-request.json"), "");

  EXPECT_EQ(ReadText(victim), "precious");
  struct stat after {};
  ASSERT_EQ(::stat(victim.c_str(), &after), 0);
  EXPECT_EQ(after.st_uid, before.st_uid);
  EXPECT_EQ(after.st_gid, before.st_gid);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_EQ(after.st_size, before.st_size);
  struct stat state {};
  ASSERT_EQ(::lstat((dir_ + "/state.json").c_str(), &state), 0);
  EXPECT_TRUE(S_ISREG(state.st_mode));
  EXPECT_EQ(ReadStateFile(dir_, "state.json").text, Sample());
}

// As root, for a directory another user owns: the new file is chowned to the
// directory's owner (by its descriptor: the file this call created), nothing
// else is. CI runs the unit tests as root; elsewhere this is skipped.
TEST_F(StateTest, RootChownsOnlyTheFileItCreated) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  fs::create_directories(dir_);
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  const fs::path victim = root_ / "victim";
  WriteText(victim, "precious");
  for (pid_t pid = std::max(1, ::getpid() - 50); pid < ::getpid() + 50; ++pid) {
    fs::create_symlink(victim, fs::path(dir_) / (".baseline-request.json.tmp." + std::to_string(pid)));
  }
  ASSERT_EQ(WriteStateFile(dir_, "baseline-request.json", "{}"), "");
  struct stat st {};
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(ReadText(victim), "precious");
  ASSERT_EQ(::lstat((dir_ + "/baseline-request.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, 65534u);
}

// EACCES says nothing of what the file holds: unreadable, not refused, so the
// model never replaces it (result_model_test.cc). Root reads anything; the
// integration test test_hostile_files.py runs the daemon as nobody for the
// same promise.
TEST_F(StateTest, UnreadableFileIsUnreadableNamingThePath) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  fs::create_directories(dir_);
  const std::string path = dir_ + "/state.json";
  WriteText(path, Sample());
  ::chmod(path.c_str(), 0);
  const StoredText stored = ReadStateFile(dir_, "state.json");
  EXPECT_EQ(stored.status, StoredText::Status::kUnreadable);
  EXPECT_EQ(stored.error, "cannot read " + path + ": Permission denied");
}

}  // namespace
}  // namespace numaprobe::daemon
