// SPDX-License-Identifier: Apache-2.0
// A workload to run beside the daemon (bench/interference.py), pinned to one
// CPU for a fixed time, printing one JSON line:
//   --mode stream: a STREAM-like copy loop over two 128 MiB arrays; reports
//                  the bytes moved per second (the bandwidth-bound co-runner);
//   --mode chase:  a dependent pointer chase over a 256 MiB buffer; reports
//                  the mean latency of each 10 ms window and their p50/p99
//                  (the latency-sensitive co-runner).
//   --trace FILE:  (chase) also writes each window as "unix_seconds mean_ns",
//                  to line windows up with the daemon's log.
// Usage: corunner --mode stream|chase --cpu N --seconds S [--trace FILE]
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/chase.h"
#include "kernels/clock.h"
#include "kernels/latency.h"

namespace k = numaprobe::kernels;

namespace {

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::perror("sched_setaffinity");
    std::exit(2);
  }
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

int Stream(double seconds) {
  const std::size_t n = (128u << 20) / sizeof(double);
  std::vector<double> a(n, 1.0), b(n, 2.0);
  const std::int64_t end = k::MonotonicNs() + static_cast<std::int64_t>(seconds * 1e9);
  const std::int64_t start = k::MonotonicNs();
  std::uint64_t bytes = 0;
  while (k::MonotonicNs() < end) {
    std::memcpy(a.data(), b.data(), n * sizeof(double));
    bytes += 2 * n * sizeof(double);  // read b, write a
    std::swap(a, b);
  }
  const double elapsed = static_cast<double>(k::MonotonicNs() - start) / 1e9;
  std::printf("{\"mode\": \"stream\", \"seconds\": %.3f, \"bytes_per_second\": %.6g, \"check\": %g}\n", elapsed,
              static_cast<double>(bytes) / elapsed, a[n / 2]);
  return 0;
}

double UnixSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int Chase(double seconds, const std::string& trace) {
  auto buffer = k::LatencyBuffer::Create({.mem_node = 0, .bytes = 256u << 20, .allow_cache_hits = true});
  if (!buffer.ok()) {
    std::fprintf(stderr, "buffer: %s\n", buffer.failure().reason.c_str());
    return 1;
  }
  constexpr std::uint64_t kChunk = 1000;
  constexpr std::int64_t kWindowNs = 10'000'000;
  void* p = buffer->cursor();
  std::vector<double> windows;
  std::vector<double> starts;  // unix seconds of each window, for --trace
  const std::int64_t end = k::MonotonicNs() + static_cast<std::int64_t>(seconds * 1e9);
  while (true) {
    const std::int64_t w0 = k::MonotonicNs();
    if (w0 >= end) break;
    if (!trace.empty()) starts.push_back(UnixSeconds());
    std::uint64_t loads = 0;
    std::int64_t now = w0;
    while (now - w0 < kWindowNs) {
      p = k::Chase(p, kChunk);
      loads += kChunk;
      now = k::MonotonicNs();
    }
    windows.push_back(static_cast<double>(now - w0) / static_cast<double>(loads));
  }
  double sum = 0;
  for (double w : windows) sum += w;
  if (!trace.empty()) {
    FILE* f = std::fopen(trace.c_str(), "w");
    if (f == nullptr) {
      std::perror(trace.c_str());
      return 1;
    }
    for (std::size_t i = 0; i < windows.size(); ++i) std::fprintf(f, "%.6f %.3f\n", starts[i], windows[i]);
    std::fclose(f);
  }
  std::printf(
      "{\"mode\": \"chase\", \"windows\": %zu, \"mean_ns\": %.3f, \"p50_ns\": %.3f, \"p99_ns\": %.3f, "
      "\"max_ns\": %.3f, \"sink\": %d}\n",
      windows.size(), sum / static_cast<double>(windows.size()), Percentile(windows, 0.5), Percentile(windows, 0.99),
      Percentile(windows, 1.0), p == nullptr ? 1 : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "stream";
  int cpu = 0;
  double seconds = 10;
  std::string trace;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mode")
      mode = argv[i + 1];
    else if (flag == "--cpu")
      cpu = std::atoi(argv[i + 1]);
    else if (flag == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (flag == "--trace")
      trace = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  Pin(cpu);
  if (mode == "stream") return Stream(seconds);
  if (mode == "chase") return Chase(seconds, trace);
  std::fprintf(stderr, "--mode must be stream or chase\n");
  return 2;
}
