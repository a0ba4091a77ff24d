// SPDX-License-Identifier: Apache-2.0
// Internal to kernels/loaded_latency_run.cc: one load thread of a loaded-
// latency sweep, and the mailbox through which the chase thread brackets its
// samples with the load threads' byte counts, clocks and scheduler states.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/bandwidth_loops.h"
#include "kernels/bandwidth_paced.h"
#include "kernels/loaded_latency.h"
#include "kernels/pin.h"

namespace numaprobe::kernels {

// Written by the chase thread, read by every load thread.
struct LoadControl {
  std::atomic<bool> quit{false};
  // Sample boundaries: 1 is the start (acknowledged once pinned and
  // calibrated), then two per sample. A load thread acknowledges a new value
  // at its next unit (~0.05-7 µs).
  std::atomic<std::uint64_t> boundary{1};
  // The current point's injection delay (kNoTrafficDelay: spin only, move no
  // memory); published before the point's first boundary.
  std::atomic<std::uint32_t> delay_ns{0};
  // Backstop: a load thread stops by itself past this CLOCK_MONOTONIC time
  // should quit never come. Set before any load thread starts.
  std::int64_t deadline_ns = 0;
};

// What a load thread saw when it acknowledged a boundary.
struct LoadMark {
  ThreadSchedState sched;
  std::uint64_t bytes = 0;  // moved since the thread started
  std::int64_t ns = 0;
};

// One load thread's mailbox. The thread writes everything but `ack` before
// ack.store(release). The chase thread reads it only after ack.load(acquire)
// reached the boundary it published, and publishes the next boundary
// (release) only after reading, which the load thread acquires before it
// writes again: no field is ever written and read at once.
struct alignas(64) LoadSlot {
  std::atomic<std::uint64_t> ack{0};
  std::string pin_error;  // set before the first ack
  double spins_per_ns = 0;
  LoadMark mark;
  std::int64_t cpu_ns = 0;  // written before the thread exits; read after join
};

struct LoadJob {
  int cpu = -1;
  const BandwidthLoops* loops = nullptr;
  PacedUnit unit;
  std::byte* region = nullptr;   // this thread's slice of the load buffer
  std::size_t region_bytes = 0;  // a multiple of unit.bytes()
};

// The body of one load thread: pins to job.cpu (on failure: sets
// slot.pin_error, acknowledges and returns), calibrates the spin, then runs
// paced units through its region, round and round, until control.quit or its
// deadline, acknowledging each new boundary in `slot`. Returns the read loops'
// sum, which the caller must consume so the loads stay observable.
std::uint64_t RunLoadThread(const LoadJob& job, const LoadControl& control, LoadSlot& slot);

}  // namespace numaprobe::kernels
