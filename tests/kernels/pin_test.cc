// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/pin.cc
#include "kernels/pin.h"

#include <sched.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

namespace numaprobe::kernels {
namespace {

// The highest CPU this process may run on; pinning happens on a helper thread
// so the test runner's own affinity is left alone.
int SomeAllowedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  return -1;
}

TEST(PinTest, PinsToAnAllowedCpu) {
  const int cpu = SomeAllowedCpu();
  ASSERT_GE(cpu, 0);
  std::string reason = "not run";
  int running_on = -1;
  std::thread([&] {
    reason = PinCurrentThread(cpu);
    running_on = sched_getcpu();
  }).join();
  EXPECT_EQ(reason, "");
  EXPECT_EQ(running_on, cpu);
}

TEST(PinTest, NonexistentCpuFailsWithAReasonNamingIt) {
  std::string reason;
  std::thread([&] { reason = PinCurrentThread(4095); }).join();
  EXPECT_EQ(reason.rfind("cpu 4095: ", 0), 0u) << reason;
  EXPECT_NE(reason.find("sched_setaffinity"), std::string::npos) << reason;

  std::thread([&] { reason = PinCurrentThread(-1); }).join();
  EXPECT_EQ(reason.rfind("cpu -1: ", 0), 0u) << reason;
}

TEST(PinTest, GuardCountsAVoluntaryContextSwitch) {
  Discards discards;
  SampleGuard guard;
  guard.Begin();
  usleep(1000);  // sleeping is a voluntary switch
  EXPECT_FALSE(guard.Clean(discards));
  EXPECT_EQ(discards.context_switch, 1u);
  EXPECT_EQ(discards.migration, 0u);
}

TEST(PinTest, GuardAcceptsAShortUndisturbedSample) {
  // A few microseconds of work rarely meets a tick; retry to ride out the odd one.
  Discards discards;
  bool clean = false;
  for (int attempt = 0; attempt < 20 && !clean; ++attempt) {
    SampleGuard guard;
    guard.Begin();
    volatile int sink = 0;
    for (int i = 0; i < 1000; ++i) sink = sink + i;
    clean = guard.Clean(discards);
  }
  EXPECT_TRUE(clean);
}

TEST(PinTest, SchedStateReportsTheCurrentCpu) {
  const ThreadSchedState s = ReadThreadSchedState();
  EXPECT_GE(s.cpu, 0);
}

}  // namespace
}  // namespace numaprobe::kernels
