// SPDX-License-Identifier: Apache-2.0
// Unit tests for kernels/bandwidth_paced.cc: one paced unit touches exactly
// its bytes, and the spin calibration is a plausible rate.
#include "kernels/bandwidth_paced.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/clock.h"
#include "tests/kernels/scratch.h"

namespace numaprobe::kernels {
namespace {

TEST(BandwidthPacedTest, UnitReadsItsBytesAndWritesOnlyTheSliceAfterThem) {
  for (const Isa isa : {Isa::kSse2, ResolveIsa(Isa::kAuto)}) {
    const BandwidthLoops& loops = LoopsFor(isa);
    const PacedUnit unit{2048, 1024};
    Scratch buf(64 + unit.bytes() + 64);
    std::byte* at = buf.data + 64;
    for (std::size_t i = 0; i < unit.read_bytes; i += 8) std::memcpy(at + i, &i, 8);
    std::uint64_t expected = 0;
    for (std::size_t i = 0; i < unit.read_bytes; i += 8) expected += i;

    EXPECT_EQ(RunPacedUnit(loops, unit, at, 0), expected) << IsaName(isa);
    for (std::size_t i = 0; i < buf.bytes; i += 8) {
      const std::size_t rel = i - 64;
      const bool written = i >= 64 && rel >= unit.read_bytes && rel < unit.bytes();
      const bool read = i >= 64 && rel < unit.read_bytes;
      if (written) {
        ASSERT_NE(buf.Word(i), kScratchFill) << IsaName(isa) << " did not write at " << rel;
      } else if (read) {
        ASSERT_EQ(buf.Word(i), rel) << IsaName(isa) << " changed a read byte at " << rel;
      } else {
        ASSERT_EQ(buf.Word(i), kScratchFill) << IsaName(isa) << " wrote outside the unit at " << i;
      }
    }
  }
}

TEST(BandwidthPacedTest, ReadOnlyUnitWritesNothing) {
  const PacedUnit unit{1024, 0};
  Scratch buf(unit.bytes());
  RunPacedUnit(LoopsFor(ResolveIsa(Isa::kAuto)), unit, buf.data, 10);
  for (std::size_t i = 0; i < buf.bytes; i += 8) ASSERT_EQ(buf.Word(i), kScratchFill) << i;
}

TEST(BandwidthPacedTest, CalibratedSpinsTakeRoughlyTheirNominalTime) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer builds instrument and slow down the spin loop";
#endif
  // One spin is about one cycle: 0.1-10 per ns covers 100 MHz to 10 GHz.
  const double per_ns = CalibrateSpinsPerNs();
  EXPECT_GT(per_ns, 0.1);
  EXPECT_LT(per_ns, 10);
  // A fresh calibration then 2 ms of spins: never much shorter than nominal
  // when the core ran at one speed throughout. On a shared host it may not:
  // a hyperthread sibling busy during the calibration and idle during the spin
  // (or a host frequency change) made a 2 ms spin take 1.36 ms in CI. That is
  // the drift the header documents, and why results report the measured load.
  // So the property is checked at a steady moment: any of a few calibrate-
  // then-spin attempts must come within 25% of nominal. A calibration wrong
  // in rate or unit, or a spin loop the compiler collapsed, fails every one.
  constexpr int kAttempts = 5;
  std::vector<std::int64_t> took_ns;
  for (int i = 0; i < kAttempts; ++i) {
    const double rate = CalibrateSpinsPerNs();
    const std::int64_t t0 = MonotonicNs();
    Spin(static_cast<std::uint64_t>(2e6 * rate));
    took_ns.push_back(MonotonicNs() - t0);
    if (took_ns.back() > 1'500'000) break;
  }
  EXPECT_GT(took_ns.back(), 1'500'000) << "2 ms of calibrated spins took (ns): " << testing::PrintToString(took_ns);
}

}  // namespace
}  // namespace numaprobe::kernels
