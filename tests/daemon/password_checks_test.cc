// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/web/password_checks.cc: bcrypt on a thread of its
// own, a bounded queue that refuses (and counts) past its limit, and a Stop
// that never waits for a check in progress.
#include "daemon/web/password_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <string>
#include <thread>

namespace numaprobe::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// "secret" at cost 12 (kMaxBcryptCost): a check takes a noticeable while.
constexpr const char* kCost12Hash = "$2y$12$mpIXjaVtbJpErPCvpaLFXeXYZbOA8Kdkd/T5/pamCJB.VfLr3ydnS";

PasswordCheck Check(const std::string& password) {
  PasswordCheck check;
  check.password = password;
  check.hash = kCost12Hash;
  check.known = true;
  return check;
}

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(PasswordChecks, ResultsComeBackFromTheCheckingThread) {
  PasswordChecks checks;
  std::promise<bool> right;
  std::promise<bool> wrong;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> other_thread{true};
  ASSERT_TRUE(checks.Submit(Check("secret"), [&](bool allowed) {
    other_thread = other_thread && std::this_thread::get_id() != caller;
    right.set_value(allowed);
  }));
  ASSERT_TRUE(checks.Submit(Check("Secret"), [&](bool allowed) { wrong.set_value(allowed); }));
  EXPECT_TRUE(right.get_future().get());
  EXPECT_FALSE(wrong.get_future().get());
  EXPECT_TRUE(other_thread);
  EXPECT_EQ(checks.refused(), 0u);
}

TEST(PasswordChecks, PastTheQueueLimitRequestsAreRefusedAndCounted) {
  PasswordChecks checks(2);
  std::atomic<int> done{0};
  int queued = 0;
  // One may be taken by the thread at once; at most 2 more wait.
  for (int i = 0; i < 6; ++i) {
    if (checks.Submit(Check("wrong"), [&](bool) { ++done; })) ++queued;
  }
  EXPECT_LE(queued, 3);
  EXPECT_GE(queued, 2);
  EXPECT_EQ(checks.refused(), static_cast<std::uint64_t>(6 - queued));
  const prometheus::MetricFamily family = checks.Family();
  EXPECT_EQ(family.name, "numaprobe_http_password_checks_refused_total");
  ASSERT_EQ(family.metric.size(), 1u);
  EXPECT_EQ(family.metric[0].counter.value, 6 - queued);
}

// SIGTERM must never wait on bcrypt: Stop returns while a check runs, and
// the `done` of that check and of the queued ones never runs. The bound is
// the measured time of one check, not a fixed number.
TEST(PasswordChecks, StopNeverWaitsForACheckInProgress) {
  const Clock::time_point measured = Clock::now();
  ASSERT_TRUE(Check("secret").Run());
  const double one_check = SecondsSince(measured);

  std::atomic<int> called{0};
  auto checks = std::make_unique<PasswordChecks>();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(checks->Submit(Check("wrong"), [&](bool) { ++called; }));
  // Let the thread get into its first check.
  std::this_thread::sleep_for(std::chrono::duration<double>(one_check / 10));
  const Clock::time_point stop = Clock::now();
  checks->Stop();
  checks.reset();
  const double stopping = SecondsSince(stop);
  EXPECT_LT(stopping, one_check / 2) << "one check takes " << one_check << " s";
  // The check in progress ends on its own and tells nobody.
  std::this_thread::sleep_for(std::chrono::duration<double>(one_check * 2));
  EXPECT_EQ(called.load(), 0);
}

}  // namespace
}  // namespace numaprobe::daemon
