// SPDX-License-Identifier: Apache-2.0
// Core-to-core cache-line transfer latency: two threads pinned to cpu_a and
// cpu_b bounce one 64-byte line, which lives on a node chosen by the caller
// (its home node changes results up to 2x across sockets, so it is a label).
// One-way latency = round-trip time / 2. Every spin loop has a deadline: a
// partner descheduled under SCHED_IDLE must not make the other thread spin
// forever or hang the daemon.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "kernels/result.h"

namespace numaprobe::kernels {

struct C2cSpec {
  int cpu_a = -1;
  int cpu_b = -1;
  int line_node = -1;
  int samples = 7;
  int round_trips = 2000;                         // per sample (~0.1-1 ms)
  int max_attempts = 0;                           // 0: 3 * samples
  std::chrono::milliseconds sample_timeout{50};   // a sample is discarded past this
  std::chrono::milliseconds total_timeout{1000};  // the whole run fails with kTimeout past this
  // The clock's step; 0: measured at the start of the run (timer_resolution.h).
  // Tests set it to stand for a coarse clock.
  std::int64_t clock_step_ns = 0;
  const std::atomic<bool>* stop = nullptr;
};

struct C2cResult {
  Outcome outcome = Outcome::kOk;
  std::string reason;
  int cpu_a = -1;
  int cpu_b = -1;
  SampleStats one_way_seconds;
  int round_trips = 0;
  BufferInfo line;  // the page holding the line, with its verified placement
  Discards discards;
  ClockReport clock;
  double cpu_seconds = 0;  // both threads
};

C2cResult MeasureCoreToCore(const C2cSpec& spec);

}  // namespace numaprobe::kernels
