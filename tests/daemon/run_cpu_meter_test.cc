// SPDX-License-Identifier: Apache-2.0
// daemon/serve/run_cpu_meter.h on real threads: a run's measuring thread is
// charged over its whole life, a thread that merely goes on meanwhile is not.
// Every quantity compared is CPU time the threads measured themselves, so the
// test holds however fast or busy the machine is.
#include "daemon/serve/run_cpu_meter.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <thread>

#include "kernels/clock.h"

namespace numaprobe::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(RunCpuMeter, ChargesTheRunsThreadsWholeLivesAndNotTheOthers) {
  // A thread that spins until told: HTTP or the scheduler loop, busy while a probe runs.
  std::atomic<bool> done{false};
  std::thread other([&] {
    while (!done.load()) {
    }
  });
  clockid_t other_clock{};
  ASSERT_EQ(pthread_getcpuclockid(other.native_handle(), &other_clock), 0);

  const std::int64_t caller_from = kernels::ThreadCpuNs();
  const RunCpuMeter meter = RunCpuMeter::Start();
  const std::int64_t other_from = kernels::ReadClockNs(other_clock);
  std::int64_t child = 0;
  // The run's measuring thread: spends 20 ms of CPU, and goes on until the
  // other thread has spent 50 ms while the run is measured.
  std::thread run([&] {
    while (kernels::ThreadCpuNs() < 20 * kMs || kernels::ReadClockNs(other_clock) - other_from < 50 * kMs) {
    }
    child = kernels::ThreadCpuNs();  // its whole life
  });
  run.join();
  const double charged = meter.Seconds() * 1e9;
  const std::int64_t caller = kernels::ThreadCpuNs() - caller_from;
  done = true;
  other.join();

  EXPECT_GE(charged, static_cast<double>(child)) << "the run's thread over its whole life";
  // The run's thread and the caller; the other thread's 50 ms or more are not
  // (25 ms for the kernel's side of the run thread's start and exit, which
  // neither clock read saw).
  EXPECT_LT(charged, static_cast<double>(child + caller + 25 * kMs)) << "caller " << caller << " ns, run " << child;
}

TEST(RunCpuMeter, WithoutTheThreadListEveryThreadIsChargedNeverLess) {
  // /proc not mounted, or hidepid: the other threads cannot be told apart, so
  // what they spent during the run is charged too (too high, never too low).
  std::atomic<bool> done{false};
  std::thread other([&] {
    while (!done.load()) {
    }
  });
  clockid_t other_clock{};
  ASSERT_EQ(pthread_getcpuclockid(other.native_handle(), &other_clock), 0);

  const RunCpuMeter meter = RunCpuMeter::Start("/nonexistent/task");
  const std::int64_t other_from = kernels::ReadClockNs(other_clock);
  // The run: this thread waits until the other has spent 30 ms meanwhile.
  while (kernels::ReadClockNs(other_clock) - other_from < 30 * kMs) {
  }
  const double charged = meter.Seconds() * 1e9;
  done = true;
  other.join();
  EXPECT_GE(charged, 30.0 * kMs) << "the other thread's CPU during the run is charged";
}

}  // namespace
}  // namespace numaprobe::daemon
