// SPDX-License-Identifier: Apache-2.0
#include "kernels/loaded_latency_load.h"

#include <cmath>
#include <cstdint>

#include "kernels/clock.h"

namespace numaprobe::kernels {
namespace {

// Units between looks at the backstop deadline: at most ~0.4 ms at 6.4 µs
// per unit, and no clock read per unit at delay 0.
constexpr std::uint64_t kDeadlineCheckUnits = 64;
// Without traffic a "unit" is only a spin: 1 µs keeps the answer to a
// boundary prompt and the deadline check rare.
constexpr double kNoTrafficSpinNs = 1000;

std::uint64_t Spins(std::uint32_t delay_ns, double spins_per_ns) {
  const double ns = delay_ns == kNoTrafficDelay ? kNoTrafficSpinNs : delay_ns;
  return static_cast<std::uint64_t>(std::llround(ns * spins_per_ns));
}

}  // namespace

std::uint64_t RunLoadThread(const LoadJob& job, const LoadControl& control, LoadSlot& slot) {
  const std::int64_t cpu_start = ThreadCpuNs();
  slot.pin_error = PinCurrentThread(job.cpu);
  if (!slot.pin_error.empty()) {
    slot.ack.store(control.boundary.load(std::memory_order_acquire), std::memory_order_release);
    slot.cpu_ns = ThreadCpuNs() - cpu_start;
    return 0;
  }
  slot.spins_per_ns = CalibrateSpinsPerNs();
  std::uint64_t seen = 0;
  std::uint64_t bytes = 0;
  std::uint64_t sink = 0;
  std::uint32_t delay_ns = control.delay_ns.load(std::memory_order_relaxed);
  std::uint64_t spins = Spins(delay_ns, slot.spins_per_ns);
  std::size_t offset = 0;
  for (std::uint64_t units = 1; !control.quit.load(std::memory_order_acquire); ++units) {
    if (units % kDeadlineCheckUnits == 0 && MonotonicNs() > control.deadline_ns) break;
    if (const std::uint64_t b = control.boundary.load(std::memory_order_acquire); b != seen) {
      seen = b;
      slot.mark = {ReadThreadSchedState(), bytes, SampleClockNs()};
      slot.ack.store(b, std::memory_order_release);
    }
    // Read after the boundary, so every sample of a point runs at its delay.
    if (const std::uint32_t d = control.delay_ns.load(std::memory_order_relaxed); d != delay_ns) {
      delay_ns = d;
      spins = Spins(d, slot.spins_per_ns);
    }
    if (delay_ns == kNoTrafficDelay) {
      Spin(spins);
      continue;
    }
    sink += RunPacedUnit(*job.loops, job.unit, job.region + offset, spins);
    bytes += job.unit.bytes();
    offset += job.unit.bytes();
    if (offset == job.region_bytes) offset = 0;
  }
  slot.cpu_ns = ThreadCpuNs() - cpu_start;
  return sink;
}

}  // namespace numaprobe::kernels
