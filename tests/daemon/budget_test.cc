// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/budget.cc
#include "daemon/serve/budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace numaprobe::daemon {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;

TEST(DutyBudget, PacesNextProbeByCostOverRatioFromItsEnd) {
  DutyBudget budget(0.01);
  budget.Charge(10 * kSec, 10 * kSec + kSec / 100, 0.02);  // 20 ms CPU at 1% -> 2 s pause
  EXPECT_EQ(budget.next_allowed_ns(), 12 * kSec + kSec / 100);
  // A probe started late is paced from its own end, not from the old slot.
  budget.Charge(20 * kSec, 20 * kSec + kSec / 100, 0.01);
  EXPECT_EQ(budget.next_allowed_ns(), 21 * kSec + kSec / 100);
}

// A probe that waited (probe lock, CPU starvation) may spend all its CPU just
// before it ends: the pause that pays for it must follow that, not be over
// already because it was counted from the start.
TEST(DutyBudget, DelayedProbeIsStillFollowedByItsPause) {
  DutyBudget budget(0.002);
  budget.Charge(0, 900 * kSec, 0.5);  // 900 s waiting for the lock, then 0.5 s CPU
  EXPECT_EQ(budget.next_allowed_ns(), 900 * kSec + 250 * kSec);
}

TEST(DutyBudget, BackToBackProbesAccumulateDebt) {
  DutyBudget budget(0.1);
  budget.Charge(0, kSec / 10, 0.1);  // 1 s pause
  budget.Charge(0, kSec / 10, 0.1);  // started early (e.g. a retry): debt adds up
  EXPECT_EQ(budget.next_allowed_ns(), kSec / 10 + 2 * kSec);
}

TEST(DutyBudget, LongRunSpendMatchesTheBudget) {
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

struct ChargedRun {
  std::int64_t start_ns;
  std::int64_t end_ns;
  double cpu;
};

// Probes as the scheduler runs them: each starts at or after next_allowed_ns(),
// often late (a round waiting for its interval, a reload), and runs for a wall
// time unrelated to its CPU (a long wait for the probe lock or for CPU first).
std::vector<ChargedRun> Simulate(double ratio, unsigned seed, int probes) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  DutyBudget budget(ratio);
  std::vector<ChargedRun> runs;
  std::int64_t t = 1000 * kSec;
  for (int i = 0; i < probes; ++i) {
    const double cost = 0.001 * std::pow(2000.0, unit(rng));  // 1 ms .. 2 s, log-uniform
    double delay = 0;                                         // seconds from next_allowed_ns() to the start
    const double d = unit(rng);
    if (d < 0.7) {
      delay = 0;
    } else if (d < 0.85) {
      delay = 10 * unit(rng);
    } else if (d < 0.95) {
      delay = 600 * unit(rng);
    } else {
      delay = 600 + 2400 * unit(rng);  // long: beyond a whole window
    }
    double wall = cost * (0.5 + 2 * unit(rng));
    if (unit(rng) < 0.1) wall += 900 * unit(rng);  // waited for the lock or for CPU
    const std::int64_t start = std::max(t, budget.next_allowed_ns()) + static_cast<std::int64_t>(delay * 1e9);
    const std::int64_t end = start + static_cast<std::int64_t>(wall * 1e9);
    budget.Charge(start, end, cost);
    runs.push_back({start, end, cost});
    t = end;
  }
  return runs;
}

// When in its run a probe spends its CPU is unknown (after a lock wait, all of
// it at the end), so a probe whose run touches a window counts in full. Over
// every 600 s window that stays within ratio * 600 s plus one probe's cost.
TEST(DutyBudget, AnyTenMinuteWindowHoldsBudgetPlusOneProbe) {
  constexpr std::int64_t kWindow = 600 * kSec;
  for (double ratio : {0.002, 0.005, 0.01}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const std::vector<ChargedRun> runs = Simulate(ratio, seed, 3000);
      double max_cost = 0;
      for (const ChargedRun& r : runs) max_cost = std::max(max_cost, r.cpu);
      const double bound = ratio * 600 + max_cost;
      double worst = 0;
      // Sliding the window's start over (e_{k-1}, e_k] keeps run k the first
      // it touches; at e_k it reaches furthest, so that start is the worst.
      for (std::size_t k = 0; k < runs.size(); ++k) {
        const std::int64_t from = runs[k].end_ns;
        double cpu = 0;
        for (std::size_t i = k; i < runs.size() && runs[i].start_ns <= from + kWindow; ++i) cpu += runs[i].cpu;
        worst = std::max(worst, cpu);
        ASSERT_LE(cpu, bound + 1e-6) << "ratio " << ratio << " seed " << seed << ": window from run " << k;
      }
      // The simulation does reach into the slack (start-based pacing broke
      // the bound for about half of these ratios and seeds).
      EXPECT_GT(worst, ratio * 600) << "ratio " << ratio << " seed " << seed;
    }
  }
}

TEST(DutyBudget, HugePausesSaturateAtADay) {
  constexpr std::int64_t kDay = 86'400 * kSec;
  DutyBudget tiny(1e-300);
  tiny.Charge(10 * kSec, 11 * kSec, 1.0);
  EXPECT_EQ(tiny.next_allowed_ns(), 11 * kSec + kDay);
  tiny.Charge(20 * kSec, 21 * kSec, 1.0);  // debt still accumulates
  EXPECT_EQ(tiny.next_allowed_ns(), 11 * kSec + 2 * kDay);

  DutyBudget zero(0.0);  // cost / 0 = inf
  zero.Charge(0, kSec, 0.5);
  EXPECT_EQ(zero.next_allowed_ns(), kSec + kDay);

  // The smallest ratio config.cc accepts paces normally below the cap.
  DutyBudget smallest(0.00001);
  smallest.Charge(0, kSec, 0.1);  // 0.1 s at 0.001% -> 10000 s
  EXPECT_NEAR(static_cast<double>(smallest.next_allowed_ns()), 10'001.0 * kSec, 1e3);
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
  // Idle long enough, nothing is left.
  EXPECT_EQ(budget.ObservedRatio(1000 * kSec), 0);
}

// Right after start the daemon used to divide by the time since its first
// probe: one 0.12 s probe read as 0.12 / 1 s, 60x a 0.002 budget.
TEST(DutyBudget, ObservedRatioDividesByTheWholeWindowFromTheStart) {
  DutyBudget budget(0.002);
  budget.Charge(1000 * kSec, 1000 * kSec + kSec / 10, 0.12);
  EXPECT_NEAR(budget.ObservedRatio(1000 * kSec + kSec / 10), 0.12 / 600, 1e-12);
  EXPECT_NEAR(budget.ObservedRatio(1100 * kSec), 0.12 / 600, 1e-12);
  DutyBudget young(0.5, 100 * kSec);
  young.Charge(0, kSec, 1.0);
  EXPECT_NEAR(young.ObservedRatio(10 * kSec), 1.0 / 100, 1e-12);
}

// A probe's cost is spread over its run, so one straddling the window's start
// (or still running at `now`) counts pro rata, not in full at its end.
TEST(DutyBudget, ObservedRatioCountsAStraddlingProbeProRata) {
  DutyBudget budget(0.5, 100 * kSec);
  budget.Charge(0, 10 * kSec, 1.0);
  EXPECT_NEAR(budget.ObservedRatio(105 * kSec), 0.5 / 100, 1e-12);  // [5, 105] holds half of [0, 10]
  EXPECT_NEAR(budget.ObservedRatio(109 * kSec), 0.1 / 100, 1e-12);
  EXPECT_NEAR(budget.ObservedRatio(5 * kSec), 0.5 / 100, 1e-12);  // [-95, 5]
  EXPECT_EQ(budget.ObservedRatio(111 * kSec), 0);
  // A probe that took no measurable time counts in full while inside the window.
  budget.Charge(200 * kSec, 200 * kSec, 0.3);
  EXPECT_NEAR(budget.ObservedRatio(250 * kSec), 0.3 / 100, 1e-12);
  EXPECT_EQ(budget.ObservedRatio(301 * kSec), 0);
}

// For any `now` (the scheduler also refreshes the gauge while idle), the
// ratio is the pro-rata CPU in [now - window, now] over the window.
TEST(DutyBudget, ObservedRatioMatchesProRataSumAtAnyTime) {
  constexpr std::int64_t kWindow = 600 * kSec;
  const std::vector<ChargedRun> runs = Simulate(0.01, 7, 400);
  DutyBudget budget(0.01);
  std::mt19937_64 rng(11);
  for (std::size_t n = 0; n < runs.size(); ++n) {
    budget.Charge(runs[n].start_ns, runs[n].end_ns, runs[n].cpu);
    const std::int64_t horizon = n + 1 < runs.size() ? runs[n + 1].start_ns : runs[n].end_ns + 2 * kWindow;
    for (int probe = 0; probe < 5; ++probe) {
      const std::int64_t now =
          std::uniform_int_distribution<std::int64_t>(runs[n].end_ns, std::max(horizon, runs[n].end_ns))(rng);
      double cpu = 0;
      for (std::size_t i = 0; i <= n; ++i) {
        const std::int64_t lo = std::max(runs[i].start_ns, now - kWindow);
        const std::int64_t hi = std::min(runs[i].end_ns, now);
        const auto run_ns = static_cast<double>(runs[i].end_ns - runs[i].start_ns);
        if (hi > lo) cpu += runs[i].cpu * static_cast<double>(hi - lo) / run_ns;
      }
      ASSERT_NEAR(budget.ObservedRatio(now), cpu / 600, 1e-12) << "after run " << n;
    }
  }
}

}  // namespace
}  // namespace numaprobe::daemon
