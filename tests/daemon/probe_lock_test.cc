// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/probe_lock.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "daemon/serve/lock_wait_meter.h"

namespace numaprobe::daemon {
namespace {

namespace fs = std::filesystem;

class ProbeLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/numaprobe-lock-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/probe.lock";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::string path_;
};

// flock locks belong to the open file description, so two ProbeLocks in one
// process exclude each other exactly as two processes would.
TEST_F(ProbeLockTest, SecondHolderWaitsUntilTheFirstReleases) {
  auto first = ProbeLock::Open(path_);
  auto second = ProbeLock::Open(path_);
  ASSERT_TRUE(first.ok()) << first.failure().reason;
  ASSERT_TRUE(second.ok()) << second.failure().reason;
  ASSERT_TRUE(first->Acquire(nullptr));

  std::atomic<bool> busy_seen{false};
  std::atomic<bool> acquired{false};
  std::thread waiter([&] { acquired = second->Acquire(nullptr, [&] { busy_seen = true; }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_TRUE(busy_seen.load());
  EXPECT_FALSE(acquired.load()) << "the lock was taken twice";
  first->Release();
  waiter.join();
  EXPECT_TRUE(acquired.load());
  EXPECT_GE(second->waited_ns(), 100'000'000) << "the wait was not accounted";
  EXPECT_EQ(first->waited_ns(), 0);
}

TEST_F(ProbeLockTest, StopFlagEndsTheWait) {
  auto holder = ProbeLock::Open(path_);
  auto waiter = ProbeLock::Open(path_);
  ASSERT_TRUE(holder.ok() && waiter.ok());
  ASSERT_TRUE(holder->Acquire(nullptr));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  EXPECT_FALSE(waiter->Acquire(&stop));
  stopper.join();
}

TEST_F(ProbeLockTest, HoldReleasesAtScopeEnd) {
  auto a = ProbeLock::Open(path_);
  auto b = ProbeLock::Open(path_);
  ASSERT_TRUE(a.ok() && b.ok());
  {
    ProbeLockHold hold(a.value(), nullptr, {});
    ASSERT_TRUE(hold.held());
    std::atomic<bool> stop{true};  // one try only
    EXPECT_FALSE(b->Acquire(&stop));
  }
  std::atomic<bool> stop{true};
  EXPECT_TRUE(b->Acquire(&stop)) << "the scope's lock was not released";
}

TEST_F(ProbeLockTest, CreatedReadableByOtherUsersWhateverTheUmask) {
  const mode_t old = umask(077);
  auto lock = ProbeLock::Open(path_);
  umask(old);
  ASSERT_TRUE(lock.ok()) << lock.failure().reason;
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::others_read, fs::perms::others_read);
}

TEST_F(ProbeLockTest, ReadOnlyFileStillLocks) {
  { ASSERT_TRUE(ProbeLock::Open(path_).ok()); }
  fs::permissions(path_, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  auto lock = ProbeLock::Open(path_);
  ASSERT_TRUE(lock.ok()) << lock.failure().reason;
  EXPECT_TRUE(lock->Acquire(nullptr));
}

TEST_F(ProbeLockTest, EmptyPathDisablesExclusion) {
  auto a = ProbeLock::Open("");
  auto b = ProbeLock::Open("");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a->enabled());
  EXPECT_TRUE(a->Acquire(nullptr));
  std::atomic<bool> stop{true};
  EXPECT_TRUE(b->Acquire(&stop));
}

TEST_F(ProbeLockTest, BadPathsAreNamed) {
  auto missing_dir = ProbeLock::Open(dir_ + "/no/such/dir/probe.lock");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_NE(missing_dir.failure().reason.find(dir_ + "/no/such/dir/probe.lock"), std::string::npos);
  EXPECT_NE(missing_dir.failure().reason.find("No such file"), std::string::npos) << missing_dir.failure().reason;

  auto directory = ProbeLock::Open(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.failure().reason.find("not a regular file"), std::string::npos) << directory.failure().reason;

  // A FIFO must be refused, not block the open.
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  auto from_fifo = ProbeLock::Open(fifo);
  ASSERT_FALSE(from_fifo.ok());
  EXPECT_NE(from_fifo.failure().reason.find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace numaprobe::daemon

namespace numaprobe::daemon {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// Any user who can open the lock file can hold it (a read-only descriptor
// suffices): the holder is named from /proc/locks, so a stall has a pid.
TEST(FlockHolderIn, FindsTheHolderOfTheFileNotItsWaiters) {
  const std::string locks =
      "1: POSIX  ADVISORY  WRITE 99 fe:01:4242 0 EOF\n"
      "2: FLOCK  ADVISORY  WRITE 1234 fe:01:4243 0 EOF\n"
      "2: -> FLOCK  ADVISORY  WRITE 555 fe:01:4242 0 EOF\n"
      "3: FLOCK  ADVISORY  WRITE 4321 fe:01:4242 0 EOF\n";
  const auto holder = FlockHolderIn(locks, makedev(0xfe, 1), 4242);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->pid, 4321);
  EXPECT_FALSE(FlockHolderIn(locks, makedev(0xfe, 1), 1).has_value());
  EXPECT_FALSE(FlockHolderIn(locks, makedev(0xfe, 2), 4242).has_value());
  // pid 0: the holder is in a PID namespace this process cannot see.
  const auto hidden = FlockHolderIn("1: FLOCK  ADVISORY  WRITE 0 08:10:7 0 EOF\n", makedev(8, 16), 7);
  ASSERT_TRUE(hidden.has_value());
  EXPECT_EQ(hidden->pid, 0);
  EXPECT_THAT(hidden->Describe(), ::testing::HasSubstr("another PID namespace"));
}

TEST_F(ProbeLockTest, HolderIsNamedByPidAndUid) {
  auto lock = ProbeLock::Open(path_);
  ASSERT_TRUE(lock.ok()) << lock.failure().reason;
  EXPECT_FALSE(lock.value().Holder().has_value());
  // Another process holds it (a child that took the lock and waits).
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(path_.c_str(), O_RDONLY);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const auto holder = lock.value().Holder();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->pid, child);
  EXPECT_EQ(holder->uid, static_cast<int>(getuid()));
  EXPECT_FALSE(holder->comm.empty());
  EXPECT_EQ(holder->Describe(),
            "pid " + std::to_string(child) + " (uid " + std::to_string(getuid()) + ", \"" + holder->comm + "\")");
}

TEST(LockWaitMeter, TotalGrowsWhileTheWaitLasts) {
  LockWaitMeter meter;
  EXPECT_EQ(meter.TotalSeconds(5 * kSecond), 0);
  meter.Started(10 * kSecond);
  EXPECT_DOUBLE_EQ(meter.CurrentSeconds(12 * kSecond), 2);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(12 * kSecond), 2);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(13 * kSecond), 3);
  meter.Finished(3.5);
  EXPECT_EQ(meter.CurrentSeconds(14 * kSecond), 0);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(20 * kSecond), 3.5);
}

TEST(LockWaitMeter, NeverDecreasesWhenTheLockMeasuredAShorterWait) {
  // The lock starts its own clock a moment after the meter's: its figure can
  // be below what was already published. A counter must not go back.
  LockWaitMeter meter;
  meter.Started(10 * kSecond);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(14 * kSecond), 4);
  meter.Finished(3.9);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(15 * kSecond), 4);
  meter.Started(20 * kSecond);
  meter.Finished(1);
  EXPECT_DOUBLE_EQ(meter.TotalSeconds(22 * kSecond), 5);
}

}  // namespace
}  // namespace numaprobe::daemon
