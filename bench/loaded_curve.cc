// SPDX-License-Identifier: Apache-2.0
// loaded_curve: runs the loaded-latency sweep (kernels/loaded_latency.h) on
// node 0 and prints the latency-vs-bandwidth curve next to two idle figures:
// the sweep's own no-traffic reference point ("ref") and a plain idle chase of
// the same buffer by kernels/latency ("idle"), so the end of the sweep can be
// compared with idle latency.
//
//   loaded_curve [--chase-cpu 0] [--load-cpus 1] (comma list) [--chase-mib 256]
//                [--load-mib 256] [--traffic read|mix|both] [--repeat 3]
//                [--samples 7] [--loads 10000] [--max-attempts 200]
//
// Idle runs bracket every sweep (before and after), because on a shared
// machine "idle" drifts with whatever else runs; the idle figure is the
// mean of both.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/bandwidth.h"
#include "kernels/latency.h"
#include "kernels/loaded_latency.h"
#include "kernels/stats.h"

namespace k = numaprobe::kernels;

namespace {

using Flags = std::map<std::string, std::string>;

long Int(const Flags& flags, const std::string& name, long fallback) {
  const auto it = flags.find(name);
  return it == flags.end() ? fallback : std::strtol(it->second.c_str(), nullptr, 0);
}

std::vector<int> Cpus(const Flags& flags, const std::string& name, const std::string& fallback) {
  std::istringstream in(flags.count(name) ? flags.at(name) : fallback);
  std::vector<int> cpus;
  for (std::string item; std::getline(in, item, ',');) cpus.push_back(std::stoi(item));
  return cpus;
}

// Median idle ns/load, or a negative value when the run was disturbed.
double IdleNs(k::LatencyBuffer& chase, int cpu, const k::LoadedLatencySpec& spec) {
  const k::LatencyResult r = k::MeasureLatency(chase, {.cpu = cpu,
                                                       .samples = spec.samples,
                                                       .loads_per_sample = spec.loads_per_sample,
                                                       .warmup_loads = spec.settle_loads,
                                                       .max_attempts = spec.max_attempts});
  if (r.outcome != k::Outcome::kOk) {
    std::printf("  idle: %s (%s)\n", std::string(k::OutcomeName(r.outcome)).c_str(), r.reason.c_str());
    return -1;
  }
  std::printf("  idle: median %.1f ns, min %.1f, max %.1f, discards %llu\n", r.seconds_per_load.median * 1e9,
              r.seconds_per_load.min * 1e9, r.seconds_per_load.max * 1e9,
              static_cast<unsigned long long>(r.discards.total()));
  return r.seconds_per_load.median * 1e9;
}

void PrintRow(const char* label, const k::LoadedLatencyPoint& p, double ref_ns, double idle_ns) {
  if (p.outcome != k::Outcome::kOk) {
    std::printf("  %9s %s\n", label, p.reason.c_str());
    return;
  }
  const double ns = p.seconds_per_load.median * 1e9;
  const auto pct = [ns](double base) { return base > 0 ? (ns / base - 1) * 100 : 0.0; };
  std::printf("  %9s %8.1f %8.1f %9.2f %+8.1f%% %+8.1f%% %8llu/%llu\n", label, ns, p.seconds_per_load.min * 1e9,
              p.load_bytes_per_second.median / 1e9, pct(ref_ns), pct(idle_ns),
              static_cast<unsigned long long>(p.discards.total()),
              static_cast<unsigned long long>(p.load_discards.total()));
}

void PrintCurve(const k::LoadedLatencyResult& r, double idle_ns) {
  std::printf("  traffic %s, isa %s, outcome %s%s%s, cpu %.0f ms\n", std::string(k::LoadTrafficName(r.traffic)).c_str(),
              std::string(k::IsaName(r.isa)).c_str(), std::string(k::OutcomeName(r.outcome)).c_str(),
              r.reason.empty() ? "" : ": ", r.reason.c_str(), r.cpu_seconds * 1e3);
  std::printf("  %9s %8s %8s %9s %9s %9s %s\n", "delay_ns", "lat_ns", "lat_min", "load_GB/s", "vs_ref", "vs_idle",
              "discards chase/load");
  const double ref_ns = r.reference.outcome == k::Outcome::kOk ? r.reference.seconds_per_load.median * 1e9 : -1;
  PrintRow("ref", r.reference, ref_ns, idle_ns);
  for (const k::LoadedLatencyPoint& p : r.points) PrintRow(std::to_string(p.delay_ns).c_str(), p, ref_ns, idle_ns);
  std::fflush(stdout);
}

// -1 (printed as such) when there is nothing to take the median of.
double Median(const std::vector<double>& v) { return k::Median(v).value_or(-1); }

// Per delay, the median over runs of each run's median (only kOk points).
void PrintSummary(const std::map<k::LoadTraffic, std::vector<k::LoadedLatencyResult>>& runs,
                  const std::vector<double>& idles) {
  const double idle_ns = Median(idles);
  std::printf("summary: idle chase (kernels/latency) median of %zu runs %.1f ns\n", idles.size(), idle_ns);
  for (const auto& [kind, results] : runs) {
    std::map<std::uint32_t, std::vector<double>> ns;
    std::map<std::uint32_t, std::vector<double>> gbs;
    for (const k::LoadedLatencyResult& r : results) {
      std::vector<k::LoadedLatencyPoint> points = r.points;
      points.insert(points.begin(), r.reference);
      for (const k::LoadedLatencyPoint& p : points) {
        if (p.outcome != k::Outcome::kOk || p.seconds_per_load.n == 0) continue;
        ns[p.delay_ns].push_back(p.seconds_per_load.median * 1e9);
        gbs[p.delay_ns].push_back(p.load_bytes_per_second.median / 1e9);
      }
    }
    const double ref_ns = Median(ns[k::kNoTrafficDelay]);
    std::printf("  %s: %9s %8s %8s %8s %9s %9s %9s\n", std::string(k::LoadTrafficName(kind)).c_str(), "delay_ns",
                "lat_ns", "min_run", "max_run", "load_GB/s", "vs_ref", "vs_idle");
    for (auto it = ns.rbegin(); it != ns.rend(); ++it) {  // reference (UINT32_MAX) first, then idle to saturation
      const auto [lo, hi] = std::minmax_element(it->second.begin(), it->second.end());
      const double m = Median(it->second);
      std::printf("  %*s  %9s %8.1f %8.1f %8.1f %9.2f %+8.1f%% %+8.1f%%\n",
                  static_cast<int>(k::LoadTrafficName(kind).size()), "",
                  it->first == k::kNoTrafficDelay ? "ref" : std::to_string(it->first).c_str(), m, *lo, *hi,
                  Median(gbs[it->first]), (m / ref_ns - 1) * 100, (m / idle_ns - 1) * 100);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  const int chase_cpu = static_cast<int>(Int(flags, "--chase-cpu", 0));

  auto chase = k::LatencyBuffer::Create(
      {.mem_node = 0, .bytes = static_cast<std::size_t>(Int(flags, "--chase-mib", 256)) << 20});
  auto load = k::BandwidthBuffer::Create(
      {.mem_node = 0, .bytes = static_cast<std::size_t>(Int(flags, "--load-mib", 256)) << 20});
  if (!chase || !load) {
    std::fprintf(stderr, "buffers: %s\n", (!chase ? chase.failure() : load.failure()).reason.c_str());
    return 1;
  }
  std::printf("chase buffer %zu MiB (%s, stride %zu), load buffer %zu MiB (%s), node 0\n", chase->info().bytes >> 20,
              k::PageSizeName(chase->info()).c_str(), chase->layout().stride, load->info().bytes >> 20,
              k::PageSizeName(load->info()).c_str());

  k::LoadedLatencySpec spec;
  spec.chase_cpu = chase_cpu;
  spec.load_cpus = Cpus(flags, "--load-cpus", "1");
  spec.mem_node = 0;
  spec.samples = static_cast<int>(Int(flags, "--samples", 7));
  spec.loads_per_sample = static_cast<std::uint64_t>(Int(flags, "--loads", 10'000));
  // A shared machine discards many samples: allow retries, bounded by the deadline.
  spec.max_attempts = static_cast<int>(Int(flags, "--max-attempts", 200));
  spec.point_timeout = std::chrono::milliseconds(Int(flags, "--point-ms", 3000));

  const std::string traffic = flags.count("--traffic") ? flags.at("--traffic") : "both";
  std::vector<k::LoadTraffic> kinds;
  if (traffic != "mix") kinds.push_back(k::LoadTraffic::kRead);
  if (traffic != "read") kinds.push_back(k::LoadTraffic::kReadNtWrite2To1);

  std::map<k::LoadTraffic, std::vector<k::LoadedLatencyResult>> runs;
  std::vector<double> idles;
  for (long i = 0, n = Int(flags, "--repeat", 3); i < n; ++i) {
    for (const k::LoadTraffic kind : kinds) {
      spec.traffic = kind;
      const double before = IdleNs(chase.value(), chase_cpu, spec);
      runs[kind].push_back(k::MeasureLoadedLatency(chase.value(), load.value(), spec));
      const double after = IdleNs(chase.value(), chase_cpu, spec);
      for (const double idle : {before, after}) {
        if (idle > 0) idles.push_back(idle);
      }
      const double idle = before > 0 && after > 0 ? (before + after) / 2 : (before > 0 ? before : after);
      std::printf("run %ld: idle chase %.1f ns before, %.1f ns after (cpu %d, same buffer and sample size)\n", i + 1,
                  before, after, chase_cpu);
      PrintCurve(runs[kind].back(), idle);
    }
  }
  PrintSummary(runs, idles);
  return 0;
}
