// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/common/serve_lock.cc: a pid is used only while its
// lock is held and only in the same PID namespace; hostile or broken files
// are refused naming the path. Signal 0 checks the target without
// disturbing it (the real SIGHUP is tests/integration/test_lifecycle.py).
#include "daemon/common/serve_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;
using Outcome = SignalResult::Outcome;

class ServeLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("numaprobe-serve-lock-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir() const { return dir_.string(); }
  fs::path dir_;
};

TEST_F(ServeLockTest, TheHolderIsFoundWhileItHoldsTheLock) {
  {
    ServeLock lock = ServeLock::Acquire(dir());
    ASSERT_TRUE(lock.held()) << lock.error();
    EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);  // created 0700
    const SignalResult found = SignalServe(dir(), 0);
    EXPECT_EQ(found.outcome, Outcome::kSignalled) << found.error;
    EXPECT_EQ(found.pid, getpid());
  }
  // Released: the file and its pid stay, and mean nothing.
  EXPECT_TRUE(fs::exists(ServeLockPath(dir())));
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kNotRunning);
}

TEST_F(ServeLockTest, ASecondServeOnTheSameDirectoryIsToldWhoHasIt) {
  ServeLock first = ServeLock::Acquire(dir());
  ASSERT_TRUE(first.held()) << first.error();
  const ServeLock second = ServeLock::Acquire(dir());
  EXPECT_FALSE(second.held());
  EXPECT_EQ(second.error(),
            "another numaprobe serve (pid " + std::to_string(getpid()) + ") uses the state directory " + dir());
  ServeLock moved = std::move(first);  // moving keeps the lock
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kSignalled);
}

TEST_F(ServeLockTest, NoDirectoryOrNoFileMeansNoServe) {
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kNotRunning);
  fs::create_directories(dir_);
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kNotRunning);
}

TEST_F(ServeLockTest, AStalePidIsNeverSignalled) {
  fs::create_directories(dir_);
  // The pid of this very process, unlocked: as after a crash whose pid was reused.
  std::ofstream(ServeLockPath(dir())) << "pid " << getpid() << "\npid_namespace whatever\n";
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kNotRunning);
}

// Holds the lock of `path` as a serve would, with `text` in the file.
int HoldWith(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  return fd;
}

TEST_F(ServeLockTest, AServeInAnotherPidNamespaceIsNotSignalled) {
  fs::create_directories(dir_);
  const int fd = HoldWith(ServeLockPath(dir()), "pid 1\npid_namespace pid:[1]\n");
  const SignalResult result = SignalServe(dir(), 0);
  EXPECT_EQ(result.outcome, Outcome::kOtherNamespace);
  EXPECT_NE(result.error.find("another PID namespace (pid:[1]"), std::string::npos) << result.error;
  close(fd);
}

TEST_F(ServeLockTest, ALockedFileWithoutAPidIsAnError) {
  fs::create_directories(dir_);
  const int fd = HoldWith(ServeLockPath(dir()), "garbage\n");
  const SignalResult result = SignalServe(dir(), 0);
  EXPECT_EQ(result.outcome, Outcome::kFailed);
  EXPECT_EQ(result.error, ServeLockPath(dir()) + " is locked but names no pid");
  close(fd);
}

TEST_F(ServeLockTest, ASymlinkOrDirectoryInItsPlaceIsRefusedNamingThePath) {
  fs::create_directories(dir_);
  fs::create_symlink("/etc/passwd", ServeLockPath(dir()));
  const ServeLock lock = ServeLock::Acquire(dir());
  EXPECT_FALSE(lock.held());
  EXPECT_EQ(lock.error().rfind("cannot open " + ServeLockPath(dir()) + ": ", 0), 0u) << lock.error();
  EXPECT_EQ(SignalServe(dir(), 0).outcome, Outcome::kFailed);
  fs::remove(ServeLockPath(dir()));
  fs::create_directory(ServeLockPath(dir()));
  EXPECT_FALSE(ServeLock::Acquire(dir()).held());
  const SignalResult result = SignalServe(dir(), 0);
  EXPECT_EQ(result.outcome, Outcome::kFailed);
  EXPECT_EQ(result.error, ServeLockPath(dir()) + " is not a regular file");
}

TEST_F(ServeLockTest, AnUnwritableStateDirectoryIsNamed) {
  const ServeLock lock = ServeLock::Acquire("/proc/numaprobe-no-such-dir");
  EXPECT_FALSE(lock.held());
  EXPECT_EQ(lock.error().rfind("cannot create /proc/numaprobe-no-such-dir: ", 0), 0u) << lock.error();
}

}  // namespace
}  // namespace numaprobe::daemon
