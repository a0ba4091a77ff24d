// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/common/safe_file.cc: what the daemon refuses to read
// (FIFOs, devices, directories, links where none are followed, files past a
// size cap) and how it creates files (O_EXCL under a random name).
#include "daemon/common/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "numaprobe_safe_file_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    dir_fd_ = UniqueFd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_fd_.ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }

  std::string dir_;
  UniqueFd dir_fd_;
};

TEST_F(SafeFile, ReadsARegularFileWithinItsLimit) {
  Write("a", "hello");
  const FileText file = ReadLimitedFile(Path("a"), 5);
  ASSERT_TRUE(file.ok()) << file.problem;
  EXPECT_EQ(file.text, "hello");
  const FileText at = ReadLimitedFileAt(dir_fd_.get(), "a", "shown/a", 5);
  ASSERT_TRUE(at.ok()) << at.problem;
  EXPECT_EQ(at.text, "hello");
  // Nothing is left non-blocking, and no descriptor leaks: 200 reads later
  // the next descriptor number is the same.
  const int before = ::dup(0);
  ::close(before);
  for (int i = 0; i < 200; ++i) (void)ReadLimitedFile(Path("a"), 5);
  const int after = ::dup(0);
  ::close(after);
  EXPECT_EQ(before, after);
}

TEST_F(SafeFile, MissingFileGivesEnoentAndNamesThePath) {
  const FileText file = ReadLimitedFile(Path("absent"), 10);
  EXPECT_EQ(file.error, ENOENT);
  EXPECT_EQ(file.problem, "cannot read " + Path("absent") + ": No such file or directory");
}

TEST_F(SafeFile, SizeLimitIsNamed) {
  Write("big", std::string(2048, 'x'));
  const FileText file = ReadLimitedFile(Path("big"), 1024);
  EXPECT_EQ(file.problem, "cannot read " + Path("big") + ": it is larger than the 1 KiB limit");
  EXPECT_EQ(file.error, 0);
  EXPECT_TRUE(file.text.empty());
  EXPECT_EQ(ByteLimit(16 * 1024 * 1024), "16 MiB");
  EXPECT_EQ(ByteLimit(300), "300 bytes");
}

// A FIFO with no writer: an ordinary open would block until one appears.
TEST_F(SafeFile, FifoIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const FileText file = ReadLimitedFile(Path("fifo"), 1024);
  const FileText at = ReadLimitedFileAt(dir_fd_.get(), "fifo", Path("fifo"), 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // it returned: no writer came
  EXPECT_EQ(file.problem, "cannot read " + Path("fifo") + ": it is a FIFO, not a regular file");
  EXPECT_EQ(at.problem, file.problem);
}

TEST_F(SafeFile, DevicesAndDirectoriesAreRefused) {
  EXPECT_EQ(ReadLimitedFile("/dev/zero", 1024).problem,
            "cannot read /dev/zero: it is a character device, not a regular file");
  EXPECT_EQ(ReadLimitedFile(dir_, 1024).problem, "cannot read " + dir_ + ": it is a directory, not a regular file");
  // Operator-named paths follow links (Kubernetes mounts are links), to what
  // they point at: /dev/zero is still refused.
  fs::create_symlink("/dev/zero", Path("zero"));
  EXPECT_THAT(ReadLimitedFile(Path("zero"), 1024).problem, HasSubstr("a character device, not a regular file"));
}

// Inside a directory someone else may write to, a link is not followed,
// whatever it points at.
TEST_F(SafeFile, LinksAreNotFollowedRelativeToADirectory) {
  Write("target", "secret");
  fs::create_symlink(Path("target"), Path("link"));
  const FileText file = ReadLimitedFileAt(dir_fd_.get(), "link", "shown/link", 1024);
  EXPECT_EQ(file.problem, "cannot read shown/link: it is a symbolic link, which is not followed here");
  EXPECT_TRUE(S_ISLNK(file.st.st_mode));
  EXPECT_TRUE(file.text.empty());
  fs::create_symlink("/dev/zero", Path("zero"));
  EXPECT_THAT(ReadLimitedFileAt(dir_fd_.get(), "zero", "shown/zero", 1024).problem, HasSubstr("symbolic link"));
}

// O_EXCL under a random name: a planted file or link is never what is
// opened, and two files never share a name.
TEST_F(SafeFile, CreatesOnlyNewFilesUnderRandomNames) {
  Write("victim", "keep");
  std::set<std::string> names;
  for (int i = 0; i < 20; ++i) {
    NewFile file = CreateNewFileAt(dir_fd_.get(), ".tmp.", 0600);
    ASSERT_TRUE(file.fd.ok()) << std::strerror(file.error);
    EXPECT_THAT(file.name, ::testing::MatchesRegex("\\.tmp\\.[0-9a-f]{16}"));
    struct stat st {};
    ASSERT_EQ(::fstat(file.fd.get(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_size, 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    names.insert(file.name);
  }
  EXPECT_EQ(names.size(), 20u);
  std::ifstream in(Path("victim"));
  std::string text;
  in >> text;
  EXPECT_EQ(text, "keep");
}

}  // namespace
}  // namespace numaprobe::daemon
