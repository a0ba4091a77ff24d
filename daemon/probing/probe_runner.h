// Runs one planned probe through the kernels: picks the buffer from the pool,
// fills the run spec from the settings, and returns the kernel's result with
// the pair it belongs to. Shared by `numaprobe probe` and the daemon's
// scheduler, so both measure exactly the same way, and both take the
// host-wide ProbeLock around every probe.
//
// Thread safety: not thread-safe; one probe at a time (the kernels themselves
// start and join their measuring threads).
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_lock.h"
#include "kernels/bandwidth.h"
#include "kernels/c2c.h"
#include "kernels/latency.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

// Per-probe knobs. The cpu/pair fields of the kernel specs are filled per run.
struct ProbeSettings {
  kernels::LatencyRunSpec latency;
  kernels::BandwidthRunSpec bandwidth;
  int bandwidth_threads = 1;  // >1: the pair's CPU plus further CPUs of its node
  std::vector<kernels::BandwidthOp> ops{kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite,
                                        kernels::BandwidthOp::kCopy};
  kernels::C2cSpec c2c;
};

struct LatencyRecord {
  MemoryPair pair;
  kernels::LatencyResult result;
};
struct BandwidthRecord {
  MemoryPair pair;
  kernels::BandwidthResult result;
};
struct C2cRecord {
  C2cPair pair;
  kernels::C2cResult result;
};

class ProbeRunner {
 public:
  // `on_lock_busy` runs when a probe finds another process holding `lock`.
  ProbeRunner(const kernels::Topology& topology, BufferPool& pool, ProbeSettings settings, ProbeLock& lock,
              std::function<void()> on_lock_busy = {})
      : topology_(topology),
        pool_(pool),
        settings_(std::move(settings)),
        lock_(lock),
        on_lock_busy_(std::move(on_lock_busy)) {}

  // Each run returns kCancelled if `stop` is raised, also while it waits for the lock.

  LatencyRecord RunLatency(const MemoryPair& pair, const std::atomic<bool>* stop);
  BandwidthRecord RunBandwidth(const MemoryPair& pair, kernels::BandwidthOp op,
                               const std::atomic<bool>* stop);
  C2cRecord RunC2c(const C2cPair& pair, const std::atomic<bool>* stop);

 private:
  // The CPUs a bandwidth run uses: the pair's CPU first, then other allowed
  // CPUs of the same node, preferring distinct cores.
  std::vector<int> BandwidthCpus(const MemoryPair& pair) const;

  const kernels::Topology& topology_;
  BufferPool& pool_;
  ProbeSettings settings_;
  ProbeLock& lock_;
  std::function<void()> on_lock_busy_;
};

}  // namespace numaprobe::daemon
