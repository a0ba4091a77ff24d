// SPDX-License-Identifier: Apache-2.0
#include "kernels/bandwidth.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "kernels/bandwidth_loops.h"
#include "kernels/bandwidth_run.h"
#include "kernels/clock.h"

namespace numaprobe::kernels {
namespace {

constexpr std::size_t kMinBurstBytes = 4096;
// The buffer must hold this many burst footprints, so that a burst never
// starts on lines the previous burst may have left in the LLC.
constexpr std::size_t kMinRotations = 4;

std::string Bytes(std::size_t bytes) {
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string Validate(const BandwidthBuffer& buffer, const BandwidthRunSpec& spec) {
  if (spec.cpus.empty()) return "no cpu given";
  for (std::size_t i = 0; i < spec.cpus.size(); ++i) {
    if (spec.cpus[i] < 0) return "cpu " + std::to_string(spec.cpus[i]) + " is not a cpu id";
    if (std::find(spec.cpus.begin(), spec.cpus.begin() + static_cast<std::ptrdiff_t>(i), spec.cpus[i]) !=
        spec.cpus.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "cpu " + std::to_string(spec.cpus[i]) + " listed twice";
    }
  }
  if (spec.bursts < 1) return "bursts must be >= 1";
  if (spec.max_attempts != 0 && spec.max_attempts < spec.bursts) return "max_attempts must be >= bursts";
  if (spec.burst_bytes % kLine != 0 || spec.burst_bytes < kMinBurstBytes) {
    return "burst_bytes " + std::to_string(spec.burst_bytes) + " must be a multiple of 64 and >= 4 KiB";
  }
  const std::size_t footprint = spec.burst_bytes * spec.cpus.size();
  if (buffer.info().bytes < MinBandwidthBufferBytes(spec.burst_bytes, spec.cpus.size())) {
    return "buffer of " + Bytes(buffer.info().bytes) + " is smaller than 4 x the burst footprint of " +
           Bytes(footprint) + " (" + std::to_string(spec.cpus.size()) +
           (spec.cpus.size() == 1 ? " thread x " : " threads x ") + Bytes(spec.burst_bytes) +
           "), so bursts could not rotate";
  }
  return {};
}

}  // namespace

std::size_t MinBandwidthBufferBytes(std::size_t burst_bytes, std::size_t threads) {
  return kMinRotations * burst_bytes * threads;
}

std::size_t BytesPerSide(BandwidthOp op, std::size_t burst_bytes) {
  return op == BandwidthOp::kCopy ? burst_bytes / 2 / kLine * kLine : burst_bytes;
}

std::string_view BandwidthOpName(BandwidthOp op) {
  switch (op) {
    case BandwidthOp::kRead:
      return "read";
    case BandwidthOp::kWrite:
      return "write";
    case BandwidthOp::kCopy:
      return "copy";
  }
  return "unknown";
}

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAuto:
      return "auto";
    case Isa::kSse2:
      return "sse2";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
    case Isa::kSve:
      return "sve";
  }
  return "unknown";
}

Expected<BandwidthBuffer> BandwidthBuffer::Create(const BandwidthBufferSpec& spec) {
  Expected<Arena> arena =
      Arena::Create(ArenaSpec{spec.bytes, spec.mem_node, spec.pages, nullptr, spec.weighted_interleave});
  if (!arena) return arena.failure();
  return BandwidthBuffer(std::move(arena).value());
}

BandwidthResult MeasureBandwidth(BandwidthBuffer& buffer, const BandwidthRunSpec& spec) {
  BandwidthResult result;
  result.op = spec.op;
  result.cpus = spec.cpus;
  result.isa = ResolveIsa(spec.isa);
  result.buffer = buffer.info();
  if (std::string why = Validate(buffer, spec); !why.empty()) {
    result.outcome = Outcome::kInvalidSpec;
    result.reason = std::move(why);
    return result;
  }
  // The kernel may have moved pages since the buffer was verified (NUMA
  // balancing, demotion): never publish a figure for memory we cannot place.
  const PlacementReport& placement =
      buffer.arena().Reverify(spec.reverify_pages, static_cast<std::uint64_t>(MonotonicNs()));
  result.buffer = buffer.info();
  if (!placement.verified()) {
    const int node = buffer.info().node;
    if (!placement.split_mismatch.empty()) {
      result.outcome = Outcome::kPlacementMismatch;
      result.reason = placement.split_mismatch;
    } else if (placement.pages_misplaced > 0) {
      result.outcome = Outcome::kPlacementMismatch;
      result.reason = "node " + std::to_string(node) + ": " + std::to_string(placement.pages_misplaced) + " of " +
                      std::to_string(placement.pages_checked) + " pages found on node " +
                      std::to_string(placement.observed_node);
    } else {
      result.outcome = Outcome::kPlacementUnverified;
      result.reason = "node " + std::to_string(node) + ": placement of " + std::to_string(placement.pages_unknown) +
                      " of " + std::to_string(placement.pages_checked) + " pages unknown";
    }
    return result;
  }
  // STREAM / likwid-bench accounting: bytes the kernel loads plus bytes it
  // stores; the write-allocate reads of copy's regular stores are not counted.
  const std::size_t sides = spec.op == BandwidthOp::kCopy ? 2 : 1;
  result.bytes_per_burst = BytesPerSide(spec.op, spec.burst_bytes) * sides * spec.cpus.size();
  RunBursts(buffer, spec, result);
  return result;
}

}  // namespace numaprobe::kernels
