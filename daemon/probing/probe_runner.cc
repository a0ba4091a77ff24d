#include "daemon/probing/probe_runner.h"

#include <algorithm>

namespace numaprobe::daemon {

using kernels::Outcome;

namespace {

// A placement failure means the pages are not (or no longer) where they must
// be: the buffer is rebuilt from scratch next time rather than trusted.
bool IsPlacementOutcome(Outcome outcome) {
  return outcome == Outcome::kPlacementMismatch || outcome == Outcome::kPlacementUnverified;
}

// False, with `result` marked cancelled, if `stop` came while waiting for the lock.
template <class Result>
bool Held(const ProbeLockHold& hold, const ProbeLock& lock, Result& result) {
  if (hold.held()) return true;
  result.outcome = Outcome::kCancelled;
  result.reason = "stopped while waiting for another numaprobe process to release " + lock.path();
  return false;
}

}  // namespace

LatencyRecord ProbeRunner::RunLatency(const MemoryPair& pair, const std::atomic<bool>* stop) {
  LatencyRecord record{pair, {}};
  record.result.cpu = pair.cpu;
  record.result.buffer.node = pair.mem_node;
  ProbeLockHold hold(lock_, stop, on_lock_busy_);
  if (!Held(hold, lock_, record.result)) return record;
  auto buffer = pool_.Latency(pair.mem_node, topology_.LlcBytesOf(pair.cpu));
  if (!buffer.ok()) {
    record.result.outcome = buffer.failure().outcome;
    record.result.reason = buffer.failure().reason;
    return record;
  }
  kernels::LatencyRunSpec spec = settings_.latency;
  spec.cpu = pair.cpu;
  spec.stop = stop;
  record.result = kernels::MeasureLatency(*buffer.value(), spec);
  if (IsPlacementOutcome(record.result.outcome)) pool_.Drop(BufferPool::Kind::kLatency, pair.mem_node);
  return record;
}

std::vector<int> ProbeRunner::BandwidthCpus(const MemoryPair& pair) const {
  std::vector<int> cpus{pair.cpu};
  const kernels::NodeInfo* node = topology_.FindNode(pair.cpu_node);
  if (node == nullptr || settings_.bandwidth_threads <= 1) return cpus;
  std::vector<int> candidates(node->cpus.rbegin(), node->cpus.rend());
  // Distinct cores first: an SMT sibling shares the core's load ports and fill buffers.
  std::stable_partition(candidates.begin(), candidates.end(), [&](int cpu) {
    return std::none_of(cpus.begin(), cpus.end(), [&](int taken) {
      return topology_.Relation(cpu, taken) == kernels::CpuRelation::kSmt;
    });
  });
  for (int cpu : candidates) {
    if (static_cast<int>(cpus.size()) >= settings_.bandwidth_threads) break;
    if (cpu != pair.cpu) cpus.push_back(cpu);
  }
  return cpus;
}

BandwidthRecord ProbeRunner::RunBandwidth(const MemoryPair& pair, kernels::BandwidthOp op,
                                          const std::atomic<bool>* stop) {
  BandwidthRecord record{pair, {}};
  record.result.op = op;
  record.result.cpus = BandwidthCpus(pair);
  record.result.buffer.node = pair.mem_node;
  ProbeLockHold hold(lock_, stop, on_lock_busy_);
  if (!Held(hold, lock_, record.result)) return record;
  auto buffer = pool_.Bandwidth(pair.mem_node);
  if (!buffer.ok()) {
    record.result.outcome = buffer.failure().outcome;
    record.result.reason = buffer.failure().reason;
    return record;
  }
  kernels::BandwidthRunSpec spec = settings_.bandwidth;
  spec.cpus = record.result.cpus;
  spec.op = op;
  spec.stop = stop;
  record.result = kernels::MeasureBandwidth(*buffer.value(), spec);
  if (IsPlacementOutcome(record.result.outcome)) pool_.Drop(BufferPool::Kind::kBandwidth, pair.mem_node);
  return record;
}

C2cRecord ProbeRunner::RunC2c(const C2cPair& pair, const std::atomic<bool>* stop) {
  kernels::C2cSpec spec = settings_.c2c;
  spec.cpu_a = pair.cpu_a;
  spec.cpu_b = pair.cpu_b;
  spec.line_node = pair.line_node;
  spec.stop = stop;
  C2cRecord record{pair, {}};
  record.result.cpu_a = pair.cpu_a;
  record.result.cpu_b = pair.cpu_b;
  record.result.line.node = pair.line_node;
  ProbeLockHold hold(lock_, stop, on_lock_busy_);
  if (!Held(hold, lock_, record.result)) return record;
  record.result = kernels::MeasureCoreToCore(spec);
  return record;
}

}  // namespace numaprobe::daemon
