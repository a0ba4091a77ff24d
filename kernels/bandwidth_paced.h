// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/bandwidth*.cc and kernels/loaded_latency*.cc: the
// delay-injected variant of the bandwidth loops, for loaded latency.
//
// Background traffic at a chosen intensity is the bandwidth loops run one
// small unit at a time with a spin after each unit (Intel MLC --loaded_latency
// injects "delay cycles between requests"; multichase multiload runs its
// bandwidth loops flat out). The per-ISA loops are reused as they are: a unit
// is one call to the ISA's read loop and, for a read/write mix, one call to its
// non-temporal write loop.
//
// This header is compiled without ISA flags (see bandwidth_loops.h for why
// that matters); nothing in it is inline.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/bandwidth.h"
#include "kernels/bandwidth_loops.h"

namespace numaprobe::kernels {

// The loops for an ISA already resolved by ResolveIsa() (isa_x86.cc,
// isa_arm64.cc: the one place per architecture that maps ISAs to loops).
const BandwidthLoops& LoopsFor(Isa isa);

// Burns `spins` iterations of a loop the compiler must keep (about one core
// cycle each): the injected delay. Spinning rather than sleeping or reading
// the clock keeps delays of tens of nanoseconds possible and costs no syscall.
void Spin(std::uint64_t spins);

// Spin() iterations per nanosecond on the calling thread, timed against
// CLOCK_MONOTONIC after a ~2 ms warm-up (the fastest of a few tries, so an
// interrupt cannot shrink it). A delay in nanoseconds becomes spins = ns * SpinsPerNs(); it drifts with
// the core's frequency, which is why results report measured bandwidth, not
// the nominal delay, as the load.
double CalibrateSpinsPerNs();

// One unit of paced traffic at `at`: read `read_bytes`, then write
// `write_bytes` right after them with non-temporal stores. Both are multiples
// of 1 KiB (every ISA's unrolled block divides it) and `at` is 64-byte aligned.
struct PacedUnit {
  std::size_t read_bytes = 1024;
  std::size_t write_bytes = 0;
  std::size_t bytes() const { return read_bytes + write_bytes; }
};

// Runs one unit with `loops`, then Spin(spins). Returns the read loop's sum,
// which the caller must consume so the loads stay observable.
std::uint64_t RunPacedUnit(const BandwidthLoops& loops, const PacedUnit& unit, std::byte* at, std::uint64_t spins);

}  // namespace numaprobe::kernels
