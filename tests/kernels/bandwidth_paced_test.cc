// Unit tests for kernels/bandwidth_paced.cc: one paced unit touches exactly
// its bytes, and the spin calibration is a plausible rate.
#include "kernels/bandwidth_paced.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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
  const double per_ns = CalibrateSpinsPerNs();
  // One spin is about one cycle: 0.1-10 per ns covers 100 MHz to 10 GHz.
  EXPECT_GT(per_ns, 0.1);
  EXPECT_LT(per_ns, 10);
  // 2 ms of spins never finish early by more than the calibration's noise;
  // the calibration keeps the fastest try, so the spin is never shorter
  // than nominal by much. (A busy machine can only make it longer.)
  const std::int64_t t0 = MonotonicNs();
  Spin(static_cast<std::uint64_t>(2e6 * per_ns));
  EXPECT_GT(MonotonicNs() - t0, 1'500'000);
}

}  // namespace
}  // namespace numaprobe::kernels
