// SPDX-License-Identifier: Apache-2.0
// bench_driver: runs one kernel the way the daemon does and prints one JSON
// object per estimate on stdout, for bench/compare_likwid.py.
//
// Why not `numaprobe probe --format json`: the comparison needs things the CLI
// rightly does not offer - the same latency buffer for the short estimates and
// the long reference run in one process, a fixed CPU and buffer size per call,
// and the CPU time of every single estimate.
//
//   bench_driver bandwidth --op read|write|copy [--cpu 0] [--buffer-mib 256]
//                [--burst-kib N] [--bursts N] [--isa auto|avx512] [--repeat 1]
//   bench_driver latency [--cpu 0] [--buffer-mib 0 (default size)] [--short 5]
//                [--long-seconds 2] [--samples N --loads N --warmup N (override
//                the LatencyRunSpec defaults, for tuning them)]
//   bench_driver c2c [--cpu-a 0] [--cpu-b 1] [--repeat 5] [--round-trips N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"
#include "kernels/result.h"

namespace k = numaprobe::kernels;

namespace {

using Flags = std::map<std::string, std::string>;

long Int(const Flags& flags, const std::string& name, long fallback) {
  const auto it = flags.find(name);
  return it == flags.end() ? fallback : std::strtol(it->second.c_str(), nullptr, 0);
}

void PrintStats(const char* name, const k::SampleStats& s, double scale) {
  std::printf("\"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"mad\": %.6g, \"n\": %zu}", name,
              s.median * scale, s.min * scale, s.max * scale, s.mad * scale, s.n);
}

void PrintHead(const char* kind, k::Outcome outcome, const std::string& reason) {
  std::string escaped;
  for (const char c : reason) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::printf("{\"kind\": \"%s\", \"outcome\": \"%s\", \"reason\": \"%s\", ", kind,
              std::string(k::OutcomeName(outcome)).c_str(), escaped.c_str());
}

int Bandwidth(const Flags& flags) {
  const std::map<std::string, k::BandwidthOp> ops = {{"read", k::BandwidthOp::kRead},
                                                     {"write", k::BandwidthOp::kWrite},
                                                     {"copy", k::BandwidthOp::kCopy}};
  const auto op = ops.find(flags.count("--op") ? flags.at("--op") : "read");
  if (op == ops.end()) return 2;
  const std::size_t mib = static_cast<std::size_t>(Int(flags, "--buffer-mib", 256));
  auto buffer = k::BandwidthBuffer::Create({0, mib << 20, k::PagePolicy::kAuto});
  if (!buffer) {
    PrintHead("bandwidth", buffer.failure().outcome, buffer.failure().reason);
    std::printf("\"op\": \"%s\"}\n", op->first.c_str());
    return 1;
  }
  k::BandwidthRunSpec spec;
  spec.cpus = {static_cast<int>(Int(flags, "--cpu", 0))};
  spec.op = op->second;
  spec.burst_bytes = static_cast<std::size_t>(Int(flags, "--burst-kib", static_cast<long>(spec.burst_bytes >> 10)))
                     << 10;
  spec.bursts = static_cast<int>(Int(flags, "--bursts", spec.bursts));
  if (flags.count("--isa") && flags.at("--isa") == "avx512") spec.isa = k::Isa::kAvx512;
  for (long i = 0, n = Int(flags, "--repeat", 1); i < n; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const k::BandwidthResult r = k::MeasureBandwidth(buffer.value(), spec);
    const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - start;
    PrintHead("bandwidth", r.outcome, r.reason);
    std::printf("\"op\": \"%s\", \"isa\": \"%s\", \"cpu\": %d, \"buffer_bytes\": %zu, \"page\": \"%s\", ",
                op->first.c_str(), std::string(k::IsaName(r.isa)).c_str(), spec.cpus[0], r.buffer.bytes,
                k::PageSizeName(r.buffer).c_str());
    std::printf("\"burst_bytes\": %zu, \"bursts\": %d, \"discards\": %llu, ", spec.burst_bytes, spec.bursts,
                static_cast<unsigned long long>(r.discards.total()));
    PrintStats("bytes_per_second", r.bytes_per_second, 1);
    std::printf(", \"cpu_ms\": %.3f, \"wall_ms\": %.3f}\n", r.cpu_seconds * 1e3, wall.count());
    std::fflush(stdout);
  }
  return 0;
}

void PrintLatency(const char* label, const k::LatencyResult& r) {
  PrintHead("latency", r.outcome, r.reason);
  std::printf("\"run\": \"%s\", \"cpu\": %d, \"buffer_bytes\": %zu, \"page\": \"%s\", \"stride\": %zu, ", label, r.cpu,
              r.buffer.bytes, k::PageSizeName(r.buffer).c_str(), r.stride);
  std::printf("\"loads_per_sample\": %llu, \"discards\": %llu, ", static_cast<unsigned long long>(r.loads_per_sample),
              static_cast<unsigned long long>(r.discards.total()));
  PrintStats("ns_per_load", r.seconds_per_load, 1e9);
  std::printf(", \"cpu_ms\": %.3f}\n", r.cpu_seconds * 1e3);
  std::fflush(stdout);
}

int Latency(const Flags& flags) {
  k::LatencyBufferSpec buffer_spec;
  buffer_spec.mem_node = 0;
  buffer_spec.bytes = static_cast<std::size_t>(Int(flags, "--buffer-mib", 0)) << 20;
  auto buffer = k::LatencyBuffer::Create(buffer_spec);
  if (!buffer) {
    PrintHead("latency", buffer.failure().outcome, buffer.failure().reason);
    std::printf("\"run\": \"setup\"}\n");
    return 1;
  }
  k::LatencyRunSpec spec;  // the daemon's default short estimate, unless overridden
  spec.cpu = static_cast<int>(Int(flags, "--cpu", 0));
  spec.samples = static_cast<int>(Int(flags, "--samples", spec.samples));
  spec.loads_per_sample = static_cast<std::uint64_t>(Int(flags, "--loads", static_cast<long>(spec.loads_per_sample)));
  spec.warmup_loads = static_cast<std::uint64_t>(Int(flags, "--warmup", static_cast<long>(spec.warmup_loads)));
  double short_ns = 0;
  for (long i = 0, n = Int(flags, "--short", 5); i < n; ++i) {
    // Spaced like (a very busy) daemon would space them, not back to back.
    std::this_thread::sleep_for(std::chrono::milliseconds(Int(flags, "--gap-ms", 200)));
    const k::LatencyResult r = k::MeasureLatency(buffer.value(), spec);
    PrintLatency("short", r);
    if (r.outcome == k::Outcome::kOk) short_ns = r.seconds_per_load.median * 1e9;
  }
  // The reference: the same chase for --long-seconds, as 20 samples so that a
  // single disturbed sample is dropped rather than spoiling the whole run.
  k::LatencyRunSpec long_spec = spec;
  const double seconds = static_cast<double>(Int(flags, "--long-seconds", 2));
  long_spec.samples = 20;
  long_spec.max_attempts = 60;
  long_spec.loads_per_sample =
      static_cast<std::uint64_t>(seconds / long_spec.samples / ((short_ns > 0 ? short_ns : 100) * 1e-9));
  if (seconds > 0) PrintLatency("long", k::MeasureLatency(buffer.value(), long_spec));
  return 0;
}

int CoreToCore(const Flags& flags) {
  k::C2cSpec spec;
  spec.cpu_a = static_cast<int>(Int(flags, "--cpu-a", 0));
  spec.cpu_b = static_cast<int>(Int(flags, "--cpu-b", 1));
  spec.line_node = 0;
  spec.round_trips = static_cast<int>(Int(flags, "--round-trips", spec.round_trips));
  for (long i = 0, n = Int(flags, "--repeat", 5); i < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const k::C2cResult r = k::MeasureCoreToCore(spec);
    PrintHead("c2c", r.outcome, r.reason);
    std::printf("\"cpu_a\": %d, \"cpu_b\": %d, \"line_node\": %d, \"round_trips\": %d, \"discards\": %llu, ", r.cpu_a,
                r.cpu_b, r.line.node, r.round_trips, static_cast<unsigned long long>(r.discards.total()));
    PrintStats("one_way_ns", r.one_way_seconds, 1e9);
    std::printf(", \"cpu_ms\": %.3f}\n", r.cpu_seconds * 1e3);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_driver bandwidth|latency|c2c [--flag value]...\n");
    return 2;
  }
  Flags flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  const std::string kind = argv[1];
  if (kind == "bandwidth") return Bandwidth(flags);
  if (kind == "latency") return Latency(flags);
  if (kind == "c2c") return CoreToCore(flags);
  std::fprintf(stderr, "unknown kind %s\n", kind.c_str());
  return 2;
}
