// SPDX-License-Identifier: Apache-2.0
#include "kernels/loaded_latency.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "kernels/clock.h"
#include "kernels/loaded_latency_run.h"
#include "kernels/placement.h"

namespace numaprobe::kernels {
namespace {

// Each load thread streams through its own slice; below this the slice is
// only a few hundred units and lives in the caches of any recent CPU.
constexpr std::size_t kMinSliceBytes = 1u << 20;
// 1 ms per KiB is ~1 MB/s: far past idle. Larger values are typos (µs for ns).
constexpr std::uint32_t kMaxDelayNs = 1'000'000;

std::string CpuList(const std::vector<int>& cpus) {
  std::string out;
  for (const int cpu : cpus) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}

std::string ValidateCpus(const LoadedLatencySpec& spec) {
  if (spec.chase_cpu < 0) return "chase cpu " + std::to_string(spec.chase_cpu) + " is not a cpu id";
  if (spec.load_cpus.empty()) return "no load cpu given: loaded latency needs at least one";
  for (auto it = spec.load_cpus.begin(); it != spec.load_cpus.end(); ++it) {
    if (*it < 0) return "load cpu " + std::to_string(*it) + " is not a cpu id";
    if (std::find(spec.load_cpus.begin(), it, *it) != it) {
      return "load cpu " + std::to_string(*it) + " listed twice";
    }
  }
  if (std::find(spec.load_cpus.begin(), spec.load_cpus.end(), spec.chase_cpu) != spec.load_cpus.end()) {
    return "chase cpu " + std::to_string(spec.chase_cpu) + " is also a load cpu (" + CpuList(spec.load_cpus) +
           "): the chase needs a CPU of its own";
  }
  return {};
}

std::string ValidateSweep(const LoadedLatencySpec& spec) {
  if (spec.delays_ns.empty()) return "no injection delay given: the sweep needs at least one point";
  for (const std::uint32_t d : spec.delays_ns) {
    if (d > kMaxDelayNs) {
      return "injection delay " + std::to_string(d) + " ns exceeds " + std::to_string(kMaxDelayNs) + " ns per KiB";
    }
  }
  if (spec.samples < 1) return "samples must be >= 1";
  if (spec.loads_per_sample == 0) return "loads_per_sample must be > 0";
  if (spec.max_attempts != 0 && spec.max_attempts < spec.samples) return "max_attempts must be >= samples";
  if (spec.point_timeout.count() <= 0 || spec.answer_timeout.count() <= 0) {
    return "point_timeout and answer_timeout must be > 0";
  }
  return {};
}

std::string ValidateBuffers(const LatencyBuffer& chase, const BandwidthBuffer& load, const LoadedLatencySpec& spec) {
  if (spec.mem_node < 0) return "memory node " + std::to_string(spec.mem_node) + " is not a node id";
  if (chase.info().node != spec.mem_node || load.info().node != spec.mem_node) {
    return "memory node " + std::to_string(spec.mem_node) + " requested, but the chase buffer is on node " +
           std::to_string(chase.info().node) + " and the load buffer on node " + std::to_string(load.info().node) +
           ": both must be on the measured node";
  }
  const std::size_t slice = load.info().bytes / spec.load_cpus.size();
  if (slice < kMinSliceBytes) {
    return "load buffer of " + std::to_string(load.info().bytes >> 10) + " KiB gives each of " +
           std::to_string(spec.load_cpus.size()) + " load threads less than 1 MiB";
  }
  return {};
}

// Re-checks a buffer's pages: the kernel can move them after creation (NUMA
// balancing, demotion). Nothing on success, else the failure, naming the buffer.
std::optional<Failure> Reverify(Arena& arena, std::size_t pages, const char* which) {
  const PlacementReport& report = arena.Reverify(pages, static_cast<std::uint64_t>(MonotonicNs()));
  if (report.verified()) return std::nullopt;
  Failure failure = PlacementFailure(report);
  failure.reason = std::string(which) + " buffer: " + failure.reason;
  return failure;
}

}  // namespace

std::string_view LoadTrafficName(LoadTraffic traffic) {
  switch (traffic) {
    case LoadTraffic::kRead:
      return "read";
    case LoadTraffic::kReadNtWrite2To1:
      return "read2-ntwrite1";
  }
  return "unknown";
}

std::vector<std::uint32_t> DefaultInjectionDelaysNs() { return {0, 50, 100, 200, 400, 800, 1600, 3200, 6400}; }

LoadedLatencyResult MeasureLoadedLatency(LatencyBuffer& chase, BandwidthBuffer& load, const LoadedLatencySpec& spec) {
  LoadedLatencyResult result;
  result.chase_cpu = spec.chase_cpu;
  result.load_cpus = spec.load_cpus;
  result.mem_node = spec.mem_node;
  result.traffic = spec.traffic;
  result.isa = ResolveIsa(spec.isa);
  result.loads_per_sample = spec.loads_per_sample;
  result.stride = chase.layout().stride;
  result.window_bytes = chase.layout().window_bytes;
  result.chase_buffer = chase.info();
  result.load_buffer = load.info();

  std::string why = ValidateCpus(spec);
  if (why.empty()) why = ValidateSweep(spec);
  if (why.empty()) why = ValidateBuffers(chase, load, spec);
  if (!why.empty()) {
    result.outcome = Outcome::kInvalidSpec;
    result.reason = std::move(why);
    return result;
  }
  // Never a figure for memory that may not be on the node: both buffers.
  std::optional<Failure> misplaced = Reverify(chase.arena(), spec.reverify_pages, "chase");
  if (!misplaced) misplaced = Reverify(load.arena(), spec.reverify_pages, "load");
  result.chase_buffer = chase.info();
  result.load_buffer = load.info();
  if (misplaced) {
    result.outcome = misplaced->outcome;
    result.reason = std::move(misplaced->reason);
    return result;
  }

  RunLoadedLatency(chase, load, spec, result);
  for (const LoadedLatencyPoint* p : {&result.reference}) (result.discards += p->discards) += p->load_discards;
  for (const LoadedLatencyPoint& p : result.points) (result.discards += p.discards) += p.load_discards;
  if (result.outcome != Outcome::kOk) return result;
  // Points are measured even after one was disturbed (a busy moment may
  // pass); the run is kOk only when all of them, and the reference, are. A
  // coarse clock is the run's outcome if any point met it: it is the host's
  // condition, not a moment's.
  std::vector<const LoadedLatencyPoint*> failed;
  if (spec.reference_point && result.reference.outcome != Outcome::kOk) failed.push_back(&result.reference);
  for (const LoadedLatencyPoint& p : result.points) {
    if (p.outcome != Outcome::kOk) failed.push_back(&p);
  }
  if (!failed.empty()) {
    const auto coarse = std::find_if(failed.begin(), failed.end(),
                                     [](const LoadedLatencyPoint* p) { return p->outcome == Outcome::kCoarseClock; });
    const LoadedLatencyPoint* first = coarse != failed.end() ? *coarse : failed.front();
    result.outcome = first->outcome;
    result.reason =
        std::to_string(failed.size()) + " of " + std::to_string(result.points.size() + (spec.reference_point ? 1 : 0)) +
        " points " +
        (coarse != failed.end() ? "disturbed or timed too coarsely; first too coarse: " : "disturbed; first: ") +
        first->reason;
  }
  return result;
}

}  // namespace numaprobe::kernels
