// Unit tests for daemon/budget.cc
#include "daemon/budget.h"

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;

TEST(DutyBudget, PacesNextProbeByCostOverRatio) {
  DutyBudget budget(0.01);
  budget.Charge(10 * kSec, 10 * kSec + kSec / 100, 0.02);  // 20 ms CPU at 1% -> 2 s pause
  EXPECT_EQ(budget.next_allowed_ns(), 12 * kSec);
  // A probe started late is paced from its own start, not from the old slot.
  budget.Charge(20 * kSec, 20 * kSec + kSec / 100, 0.01);
  EXPECT_EQ(budget.next_allowed_ns(), 21 * kSec);
}

TEST(DutyBudget, BackToBackProbesAccumulateDebt) {
  DutyBudget budget(0.1);
  budget.Charge(0, kSec / 10, 0.1);  // 1 s pause
  budget.Charge(0, kSec / 10, 0.1);  // started early (e.g. a retry): debt adds up
  EXPECT_EQ(budget.next_allowed_ns(), 2 * kSec);
}

TEST(DutyBudget, PacingKeepsAnyWindowWithinBudgetPlusOneProbe) {
  const double ratio = 0.002;
  DutyBudget budget(ratio);
  std::int64_t now = 0;
  double spent = 0;
  const double costs[] = {0.03, 0.01, 0.12, 0.002, 0.05};
  for (int i = 0; i < 500; ++i) {
    now = std::max(now, budget.next_allowed_ns());
    const double c = costs[i % 5];
    budget.Charge(now, now + static_cast<std::int64_t>(c * 1e9), c);
    spent += c;
  }
  const double elapsed = static_cast<double>(budget.next_allowed_ns()) / 1e9;
  EXPECT_NEAR(spent / elapsed, ratio, ratio * 0.01);
}

// cost / ratio beyond int64_t nanoseconds used to overflow (undefined; on x86
// INT64_MIN, so the next probe was allowed at once): pauses saturate at a day.
TEST(DutyBudget, HugePausesSaturateAtADay) {
  constexpr std::int64_t kDay = 86'400 * kSec;
  DutyBudget tiny(1e-300);
  tiny.Charge(10 * kSec, 11 * kSec, 1.0);
  EXPECT_EQ(tiny.next_allowed_ns(), 10 * kSec + kDay);
  tiny.Charge(20 * kSec, 21 * kSec, 1.0);  // debt still accumulates
  EXPECT_EQ(tiny.next_allowed_ns(), 10 * kSec + 2 * kDay);

  DutyBudget zero(0.0);  // cost / 0 = inf
  zero.Charge(0, kSec, 0.5);
  EXPECT_EQ(zero.next_allowed_ns(), kDay);

  // The smallest ratio config.cc accepts paces normally below the cap.
  DutyBudget smallest(0.00001);
  smallest.Charge(0, kSec, 0.1);  // 0.1 s at 0.001% -> 10000 s
  EXPECT_NEAR(static_cast<double>(smallest.next_allowed_ns()), 10'000.0 * kSec, 1e3);
  const std::int64_t before = smallest.next_allowed_ns();
  smallest.Charge(0, kSec, 100.0);  // 10^7 s -> a day
  EXPECT_EQ(smallest.next_allowed_ns(), before + kDay);
}

TEST(DutyBudget, ObservedRatioOverTrailingWindow) {
  DutyBudget budget(0.5, 100 * kSec);
  EXPECT_EQ(budget.ObservedRatio(0), 0);
  budget.Charge(0, kSec, 1.0);
  budget.Charge(50 * kSec, 51 * kSec, 1.0);
  EXPECT_NEAR(budget.ObservedRatio(100 * kSec), 2.0 / 100, 1e-9);
  // The first charge has left the 100 s window.
  EXPECT_NEAR(budget.ObservedRatio(140 * kSec), 1.0 / 100, 1e-9);
  // Younger than the window: divide by the time since the first probe.
  DutyBudget young(0.5, 100 * kSec);
  young.Charge(0, kSec, 1.0);
  EXPECT_NEAR(young.ObservedRatio(10 * kSec), 0.1, 1e-9);
}

}  // namespace
}  // namespace numaprobe::daemon
