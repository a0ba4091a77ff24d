// SPDX-License-Identifier: Apache-2.0
// Loaded latency: the idle-latency pointer chase from one CPU while other CPUs
// generate memory traffic to the same node at a swept intensity, giving the
// latency-vs-bandwidth curve (Intel MLC --loaded_latency, google/multichase
// multiload).
//
// Method (docs/measurement.md, "Loaded latency"):
//  - the chase is kernels/latency's: same LatencyBuffer, chain and stride;
//  - each load CPU runs one pinned thread streaming through its own slice of a
//    BandwidthBuffer with the existing vector loops, one 1 KiB unit at a time,
//    spinning `delay_ns` after every unit (bandwidth_paced.h). Delay 0 is
//    saturation; the default sweep ends at 6400 ns per KiB (~0.16 GB/s per
//    thread), close to idle;
//  - traffic kRead (MLC's default for --loaded_latency) or kReadNtWrite2To1:
//    2 KiB read then 1 KiB non-temporal write per unit (MLC -W7). NT stores
//    make bytes counted = bytes the memory controller sees: no write-allocate
//    read, no write-back landing outside the measured interval;
//  - every chase sample is bracketed by a handshake with the load threads, each
//    of which records its byte count, clock and scheduler state at both ends:
//    the load bandwidth of a point is measured by the load threads over the
//    very interval of each sample, and a sample during which any thread (chase
//    or load) was context-switched or migrated is discarded and retried;
//  - a reference point first: the same threads and handshake, no traffic.
//
// Both buffers must be on spec.mem_node and verified there, or nothing is
// reported. Every wait has a deadline; every thread is joined on every path.
// CPU cost is bounded by (1 + load CPUs) x wall time, and wall time by
// (delays + 2) x point_timeout (start, reference point, one per delay), plus
// one sample attempt per point: deadlines are checked between samples.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/bandwidth.h"
#include "kernels/latency.h"
#include "kernels/result.h"

namespace numaprobe::kernels {

enum class LoadTraffic {
  kRead,             // loads only
  kReadNtWrite2To1,  // per unit: 2 KiB loaded, 1 KiB stored non-temporally
};
std::string_view LoadTrafficName(LoadTraffic traffic);  // "read", "read2-ntwrite1"

// 0 (saturation), 50, 100, 200, 400, 800, 1600, 3200, 6400 ns per 1 KiB unit.
std::vector<std::uint32_t> DefaultInjectionDelaysNs();

// The delay_ns of the reference point: load threads pinned and answering the
// handshake, but moving no memory.
inline constexpr std::uint32_t kNoTrafficDelay = UINT32_MAX;

struct LoadedLatencySpec {
  int chase_cpu = -1;
  std::vector<int> load_cpus;  // one load thread each; must not contain chase_cpu
  int mem_node = -1;           // both buffers must live here
  LoadTraffic traffic = LoadTraffic::kRead;
  std::vector<std::uint32_t> delays_ns = DefaultInjectionDelaysNs();  // one point each, in order
  // First measure a reference point without traffic: idle latency with the
  // same threads on the same CPUs and the same discard rules. On a shared
  // host it is the fair baseline, since a clean sample also proves nobody
  // else ran on the load CPUs (a plain idle chase cannot say that).
  bool reference_point = true;
  int samples = 5;                          // accepted chase samples per point
  std::uint64_t loads_per_sample = 10'000;  // ~1.5 ms idle, longer loaded
  int max_attempts = 0;                     // per point; 0: 3 * samples
  // Chased before each point's first sample: the chase core leaves low
  // P-states and the traffic settles at the new delay.
  std::uint64_t settle_loads = 10'000;
  Isa isa = Isa::kAuto;
  std::size_t reverify_pages = 64;  // per buffer, before measuring
  // A point without its samples by then is kDisturbed; startup (pinning,
  // spin calibration) gets the same budget.
  std::chrono::milliseconds point_timeout{1000};
  // A load thread must acknowledge a sample boundary within this (it was
  // descheduled otherwise): the sample is discarded as a timeout.
  std::chrono::milliseconds answer_timeout{20};
  // The clock's step; 0: measured at the start of the run (timer_resolution.h).
  // Tests set it to stand for a coarse clock.
  std::int64_t clock_step_ns = 0;
  const std::atomic<bool>* stop = nullptr;  // checked between samples and in every wait
};

struct LoadedLatencyPoint {
  std::uint32_t delay_ns = 0;
  Outcome outcome = Outcome::kOk;  // kOk, kDisturbed or kCoarseClock; figures only when kOk
  std::string reason;
  SampleStats seconds_per_load;       // chase latency over accepted samples
  SampleStats load_bytes_per_second;  // all load threads together, per accepted sample
  std::uint64_t load_bytes = 0;       // moved by the load threads during accepted samples
  // Samples discarded because the chase thread, or a load thread, was
  // switched out or migrated (timeout: a load thread answered late). A sample
  // disturbed on both sides is counted in both.
  Discards discards;
  Discards load_discards;
};

struct LoadedLatencyResult {
  Outcome outcome = Outcome::kOk;  // kOk only when every point (and the reference) is kOk
  std::string reason;
  int chase_cpu = -1;
  std::vector<int> load_cpus;
  int mem_node = -1;
  LoadTraffic traffic = LoadTraffic::kRead;
  Isa isa = Isa::kSse2;  // of the load threads' loops
  std::uint64_t loads_per_sample = 0;
  std::size_t stride = 0;
  std::size_t window_bytes = 0;
  BufferInfo chase_buffer;
  BufferInfo load_buffer;
  std::vector<double> spins_per_ns;        // per load thread (see CalibrateSpinsPerNs)
  LoadedLatencyPoint reference;            // delay_ns == kNoTrafficDelay; n == 0 if not measured
  std::vector<LoadedLatencyPoint> points;  // one per delay attempted, in spec order
  Discards discards;                       // every point's, chase and load side together
  ClockReport clock;                       // shortest_sample_seconds: of every point's chase samples
  double cpu_seconds = 0;                  // chase and load threads together
};

// Runs the sweep. `chase` and `load` must be distinct buffers on spec.mem_node;
// the load buffer is split evenly between the load threads (>= 1 MiB each;
// size it >= 4x the LLC in total so the traffic reaches memory).
LoadedLatencyResult MeasureLoadedLatency(LatencyBuffer& chase, BandwidthBuffer& load, const LoadedLatencySpec& spec);

}  // namespace numaprobe::kernels
