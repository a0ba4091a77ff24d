// SPDX-License-Identifier: Apache-2.0
#include "kernels/bandwidth_paced.h"

#include <algorithm>
#include <cstdint>

#include "kernels/clock.h"

namespace numaprobe::kernels {
namespace {

// ~0.1-0.5 ms per try: long against the clock's ~25 ns, short enough that
// most tries fit between two interrupts.
constexpr std::uint64_t kCalibrationSpins = 1u << 19;
constexpr int kCalibrationTries = 5;
// ~2 ms at 2 GHz first: a core still ramping up from a low P-state would
// calibrate slow and then inject shorter delays than asked.
constexpr std::uint64_t kWarmupSpins = 1u << 22;

}  // namespace

void Spin(std::uint64_t spins) {
  // The empty asm claims to change the counter: the loop can be neither
  // removed nor collapsed into one subtraction.
  for (; spins > 0; --spins) asm volatile("" : "+r"(spins));
}

double CalibrateSpinsPerNs() {
  Spin(kWarmupSpins);
  std::int64_t best = INT64_MAX;
  for (int i = 0; i < kCalibrationTries; ++i) {
    const std::int64_t t0 = SampleClockNs();
    Spin(kCalibrationSpins);
    best = std::min(best, SampleClockNs() - t0);
  }
  return static_cast<double>(kCalibrationSpins) / static_cast<double>(std::max<std::int64_t>(best, 1));
}

std::uint64_t RunPacedUnit(const BandwidthLoops& loops, const PacedUnit& unit, std::byte* at, std::uint64_t spins) {
  const std::uint64_t sum = loops.read(at, unit.read_bytes);
  if (unit.write_bytes > 0) loops.write(at + unit.read_bytes, unit.write_bytes, kWritePattern);
  if (spins > 0) Spin(spins);
  return sum;
}

}  // namespace numaprobe::kernels
