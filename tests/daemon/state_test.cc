// Unit tests for daemon/state.cc: the host fingerprint and the atomically
// written state file.
#include "daemon/serve/state.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

  static Baseline Sample() {
    Baseline baseline;
    baseline.fingerprint = "0123456789abcdef";
    baseline.created = "2024-05-01T12:00:00Z";
    baseline.complete = true;
    BaselineValue latency;
    latency.probe = "latency";
    latency.cpu_node = 0;
    latency.mem_node = 1;
    latency.value = 1.25e-7;
    BaselineValue bandwidth;
    bandwidth.probe = "bandwidth";
    bandwidth.cpu = 3;
    bandwidth.cpu_node = 1;
    bandwidth.mem_node = 0;
    bandwidth.op = "copy";
    bandwidth.value = 1.5e10;
    baseline.values = {latency, bandwidth};
    return baseline;
  }

  fs::path root_;
  std::string dir_;
};

TEST_F(StateTest, MissingFileIsNotAnError) {
  const LoadedState state = LoadState(dir_);
  EXPECT_EQ(state.status, LoadedState::Status::kMissing);
  EXPECT_FALSE(state.baseline.has_value());
}

TEST_F(StateTest, SaveThenLoadRoundTrips) {
  ASSERT_EQ(SaveState(dir_, Sample()), "");  // creates the directory
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);
  const LoadedState state = LoadState(dir_);
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  ASSERT_TRUE(state.baseline.has_value());
  const Baseline& got = *state.baseline;
  EXPECT_EQ(got.fingerprint, "0123456789abcdef");
  EXPECT_EQ(got.created, "2024-05-01T12:00:00Z");
  EXPECT_TRUE(got.complete);
  ASSERT_EQ(got.values.size(), 2u);
  EXPECT_EQ(got.values[0].probe, "latency");
  EXPECT_EQ(got.values[0].cpu, -1);
  EXPECT_EQ(got.values[0].mem_node, 1);
  EXPECT_DOUBLE_EQ(got.values[0].value, 1.25e-7);
  EXPECT_EQ(got.values[1].cpu, 3);
  EXPECT_EQ(got.values[1].op, "copy");
  EXPECT_DOUBLE_EQ(got.values[1].value, 1.5e10);
}

TEST_F(StateTest, AtomicWriteLeavesNoTemporaryFiles) {
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  ASSERT_EQ(SaveState(dir_, Sample()), "");  // replacing an existing file
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

// A writer SIGKILLed mid-write leaves its temp file (tests/integration/
// test_state_kill.py makes them); the next successful write removes those of
// dead processes and keeps a live writer's.
TEST_F(StateTest, SuccessfulWriteRemovesTempFilesOfDeadWriters) {
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);  // reaped: the pid names no process now
  std::ofstream(fs::path(dir_) / (".state.json.tmp." + std::to_string(dead))) << "{\"trunc";
  std::ofstream(fs::path(dir_) / (".state.json.tmp." + std::to_string(getppid()))) << "{";  // alive
  std::ofstream(fs::path(dir_) / ".state.json.tmp.notapid") << "{";
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  EXPECT_THAT(Entries(), ::testing::UnorderedElementsAre(".state.json.tmp." + std::to_string(getppid()),
                                                         ".state.json.tmp.notapid", "state.json"));
}

TEST_F(StateTest, ADirectoryAtTheFileIsNotReplacedAndNoTemporaryFileIsLeft) {
  // A non-empty directory named state.json could not be renamed over anyway.
  fs::create_directories(fs::path(dir_) / "state.json" / "keep");
  const std::string error = SaveState(dir_, Sample());
  EXPECT_THAT(error, HasSubstr(dir_ + "/state.json"));
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

TEST_F(StateTest, CorruptFilesAreReportedAndReplaced) {
  const std::string path = dir_ + "/state.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage", "\x01not json at all"},
      {"empty", ""},
      {"truncated", R"({"format": 1, "baseline": {"fingerprint": "ab)"},
      {"not an object", "[1, 2]"},
      {"no format", R"({"baseline": null})"},
      {"wrong format", R"({"format": 2})"},
      {"format as string", R"({"format": "1"})"},
      {"baseline not an object", R"({"format": 1, "baseline": 7})"},
      {"fingerprint a number",
       R"({"format": 1, "baseline": {"fingerprint": 5, "created": "", "complete": true, "values": []}})"},
      {"complete a string",
       R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": "yes", "values": []}})"},
      {"values missing", R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": true}})"},
      {"node a float", R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": true, "values": [
          {"probe": "latency", "cpu": -1, "cpu_node": 0.5, "mem_node": 0, "op": "", "value": 1}]}})"},
      {"value null", R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": true, "values": [
          {"probe": "latency", "cpu": -1, "cpu_node": 0, "mem_node": 0, "op": "", "value": null}]}})"},
  };
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    fs::create_directories(dir_);
    WriteText(path, text);
    const LoadedState state = LoadState(dir_);
    EXPECT_EQ(state.status, LoadedState::Status::kCorrupt);
    EXPECT_THAT(state.error, HasSubstr(path));
    EXPECT_FALSE(state.baseline.has_value());

    ASSERT_EQ(SaveState(dir_, Sample()), "");
    EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kOk);
    // The unusable file is kept, byte for byte, before it is replaced.
    std::vector<std::string> copies;
    for (const std::string& entry : Entries()) {
      if (entry.rfind("state.json.corrupt-", 0) == 0) copies.push_back(entry);
    }
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(ReadText(fs::path(dir_) / copies[0]), text);
    fs::remove_all(dir_);
  }
}

TEST_F(StateTest, CorruptMessageNamesTheField) {
  fs::create_directories(dir_);
  WriteText(dir_ + "/state.json",
            R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": true, "values": [
                {"probe": "latency", "cpu": "x", "cpu_node": 0, "mem_node": 0, "op": "", "value": 1}]}})");
  EXPECT_THAT(LoadState(dir_).error, HasSubstr("baseline.values[0].cpu"));
  WriteText(dir_ + "/state.json",
            R"({"format": 1, "baseline": {"fingerprint": "", "created": "", "complete": true, "values": [],
                "memory_errors": {"corrected": -1, "uncorrected": 0}}})");
  EXPECT_THAT(LoadState(dir_).error, HasSubstr("baseline.memory_errors.corrected"));
}

TEST_F(StateTest, DirectoryAtTheFileIsCorrupt) {
  fs::create_directories(fs::path(dir_) / "state.json");  // not a regular file
  const LoadedState state = LoadState(dir_);
  EXPECT_EQ(state.status, LoadedState::Status::kCorrupt);
  EXPECT_THAT(state.error, HasSubstr(dir_ + "/state.json"));
}

TEST_F(StateTest, DirectoryUnderARegularFileIsAnErrorNamingThePath) {
  // Works as root too, where permission bits do not stop a write: ENOTDIR.
  const std::string file = (root_ / "plainfile").string();
  WriteText(file, "x");
  const std::string dir = file + "/sub";
  const std::string error = SaveState(dir, Sample());
  EXPECT_THAT(error, HasSubstr(dir));
  EXPECT_THAT(error, HasSubstr("Not a directory"));
  // Nothing there to replace: unreadable, not corrupt.
  EXPECT_EQ(LoadState(dir).status, LoadedState::Status::kUnreadable);
}

TEST_F(StateTest, ReadOnlyDirectoryIsAnErrorNamingThePath) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string error = SaveState(dir_, Sample());
  EXPECT_THAT(error, HasSubstr(dir_));
  EXPECT_THAT(error, HasSubstr("Permission denied"));
}

TEST_F(StateTest, NonFiniteValueIsRefused) {
  Baseline baseline = Sample();
  baseline.values[0].value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(SaveState(dir_, baseline), HasSubstr("not finite"));
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kMissing);
}

// A string that is not UTF-8 (from firmware, say) must not make the writer
// throw: that would end the process every time the baseline is saved.
TEST_F(StateTest, TextThatIsNotUtf8IsWrittenReplaced) {
  Baseline baseline = Sample();
  baseline.facts = {{"firmware", "V\xff"}};
  ASSERT_EQ(SaveState(dir_, baseline), "");
  const LoadedState state = LoadState(dir_);
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  EXPECT_EQ(state.baseline->facts.at("firmware"), "V\xef\xbf\xbd");  // U+FFFD
}

TEST_F(StateTest, ResetRemovesTheBaseline) {
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  ASSERT_EQ(ResetState(dir_), "");
  const LoadedState state = LoadState(dir_);
  EXPECT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  EXPECT_FALSE(state.baseline.has_value());
  EXPECT_THAT(Entries(), ElementsAre("state.json"));
}

TEST_F(StateTest, MarkersSayResetOrAccept) {
  fs::create_directories(dir_);  // without one, a reset has nothing to forget and writes nothing
  ASSERT_EQ(ResetState(dir_), "");
  EXPECT_EQ(LoadState(dir_).marker, "reset");
  ASSERT_EQ(ResetState(dir_, "accept"), "");
  EXPECT_EQ(LoadState(dir_).marker, "accept");
  WriteText(dir_ + "/state.json", R"({"format": 1})");  // written by an older numaprobe
  EXPECT_EQ(LoadState(dir_).marker, "reset");
  WriteText(dir_ + "/state.json", R"({"format": 1, "marker": "bogus"})");
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kCorrupt);
}

TEST_F(StateTest, HostFactsTopologyChangesAndSpreadRoundTrip) {
  Baseline baseline = Sample();
  baseline.topology = "nodes=0,1;distances=10,21,21,10";
  baseline.facts = {{"kernel", "6.6.13-amd64"}, {"firmware", "unknown"}};
  baseline.changes = {{"kernel", "6.1.0", "6.6.13-amd64", 1700000000.5}};
  baseline.memory_errors = MemoryErrorCounts{12, 3};
  baseline.spread = baseline.values;
  baseline.spread[0].value = 0.012;
  baseline.spread[1].value = 0.04;
  ASSERT_EQ(SaveState(dir_, baseline), "");
  const LoadedState state = LoadState(dir_);
  ASSERT_EQ(state.status, LoadedState::Status::kOk) << state.error;
  const Baseline& got = *state.baseline;
  EXPECT_EQ(got.topology, baseline.topology);
  EXPECT_EQ(got.facts, baseline.facts);
  ASSERT_EQ(got.changes.size(), 1u);
  EXPECT_EQ(got.changes[0].before, "6.1.0");
  EXPECT_EQ(got.changes[0].after, "6.6.13-amd64");
  EXPECT_DOUBLE_EQ(got.changes[0].unix_seconds, 1700000000.5);
  ASSERT_TRUE(got.memory_errors);
  EXPECT_EQ(got.memory_errors->corrected, 12u);
  EXPECT_EQ(got.memory_errors->uncorrected, 3u);
  ASSERT_EQ(got.spread.size(), 2u);
  EXPECT_DOUBLE_EQ(got.spread[0].value, 0.012);
  EXPECT_EQ(got.spread[1].op, "copy");
  EXPECT_TRUE(state.marker.empty());
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

TEST_F(StateTest, ResetReplacesACorruptFile) {
  fs::create_directories(dir_);
  WriteText(dir_ + "/state.json", "garbage");
  ASSERT_EQ(ResetState(dir_), "");
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kOk);
}

TEST_F(StateTest, ResetWithoutStateIsSuccessAndCreatesNothing) {
  EXPECT_EQ(ResetState(dir_), "");
  EXPECT_FALSE(fs::exists(dir_));
}

// The file is opened relative to the directory, without following links,
// and only a regular file within the size and shape limits is parsed: a FIFO
// does not block, /dev/zero is not read, deep nesting is not built.
TEST_F(StateTest, HostileFilesAreCorruptNamingTheProblemAndReadPromptly) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/state.json";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kCorrupt);  // returned: no writer ever came
  EXPECT_EQ(LoadState(dir_).error, "cannot read " + path + ": it is a FIFO, not a regular file");
  fs::remove(path);

  fs::create_symlink("/dev/zero", path);
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kCorrupt);
  EXPECT_EQ(LoadState(dir_).error, "cannot read " + path + ": it is a symbolic link, which is not followed here");
  fs::remove(path);

  WriteText(path, std::string(5 * 1024 * 1024, '['));
  EXPECT_EQ(LoadState(dir_).status, LoadedState::Status::kCorrupt);
  EXPECT_EQ(LoadState(dir_).error,
            "invalid state file " + path + ": arrays and objects nested deeper than the limit of 32 levels");

  std::string many = "[";
  for (int i = 0; i < 1'000'001; ++i) many += "0,";
  many.back() = ']';
  WriteText(path, many);
  EXPECT_EQ(LoadState(dir_).error,
            "invalid state file " + path + ": more than 1000000 JSON values, the limit for a state file");

  fs::resize_file(path, 16 * 1024 * 1024 + 1);
  EXPECT_EQ(LoadState(dir_).error, "cannot read " + path + ": it is larger than the 16 MiB limit");
}

// Finding 1 of issue 41: root's `numaprobe baseline reset` (or a daemon run
// as root) wrote through a link the state directory's owner planted at the
// predictable temp name, and chowned the target to that owner. A link (and a
// file) at every name the writer could predict: the temp names of the pids
// around ours (the old scheme), the corrupt copy's names for the next
// minute, state.json itself. No write, truncation or chown may reach the
// targets; state.json ends up a new regular file.
TEST_F(StateTest, NoWriteFollowsALinkPlantedAtAPredictableName) {
  fs::create_directories(dir_);
  const fs::path victim = root_ / "victim";
  WriteText(victim, "precious");
  ::chmod(victim.c_str(), 0600);
  const pid_t self = ::getpid();
  for (pid_t pid = std::max(1, self - 200); pid < self + 200; ++pid) {
    fs::create_symlink(victim, fs::path(dir_) / (".state.json.tmp." + std::to_string(pid)));
    fs::create_symlink(victim, fs::path(dir_) / (".state.json.tmp." + std::to_string(pid) + ".0"));
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
  struct stat before {};
  ASSERT_EQ(::stat(victim.c_str(), &before), 0);

  ASSERT_EQ(ResetState(dir_), "");
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  ASSERT_EQ(ResetState(dir_, "accept"), "");

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
  EXPECT_EQ(LoadState(dir_).marker, "accept");
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
    fs::create_symlink(victim, fs::path(dir_) / (".state.json.tmp." + std::to_string(pid)));
  }
  ASSERT_EQ(ResetState(dir_), "");
  struct stat st {};
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(ReadText(victim), "precious");
  ASSERT_EQ(::lstat((dir_ + "/state.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, 65534u);
}

// EACCES says nothing of what the file holds: it is not corrupt, and no
// write replaces it. Root reads anything; the integration test
// test_hostile_files.py runs the daemon as nobody for the same promise.
TEST_F(StateTest, UnreadableFileIsKeptNotReplaced) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  fs::create_directories(dir_);
  const std::string path = dir_ + "/state.json";
  WriteText(path, "{\"format\": 1}");
  ::chmod(path.c_str(), 0);
  const LoadedState state = LoadState(dir_);
  EXPECT_EQ(state.status, LoadedState::Status::kUnreadable);
  EXPECT_EQ(state.error, "cannot read " + path + ": Permission denied");
  EXPECT_THAT(SaveState(dir_, Sample()), HasSubstr("not replacing " + path));
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(ReadText(path), "{\"format\": 1}");
}

// The identity a marker is remembered by changes when the file is replaced.
TEST_F(StateTest, FileIdChangesWhenTheFileIsReplaced) {
  ASSERT_EQ(SaveState(dir_, Sample()), "");
  ASSERT_EQ(ResetState(dir_), "");
  const std::string first = LoadState(dir_).file_id;
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(LoadState(dir_).file_id, first);
  ASSERT_EQ(ResetState(dir_), "");
  EXPECT_NE(LoadState(dir_).file_id, first);
}

}  // namespace
}  // namespace numaprobe::daemon
