// What every probe run needs besides its kind: the topology, the prepared
// buffers, the settings and the host-wide ProbeLock. A kind's Run (probing/
// kinds/) takes its buffers from here and holds the lock through Hold(), so
// `numaprobe probe` and the daemon's scheduler measure exactly the same way,
// and both exclude every other numaprobe process on the host while they do.
//
// Thread safety: not thread-safe; one probe at a time (the kernels themselves
// start and join their measuring threads).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/plan.h"
#include "daemon/probing/probe_kind.h"
#include "daemon/probing/probe_lock.h"
#include "daemon/probing/probe_settings.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

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

  // Runs one target of `kind`; kCancelled if `stop` is raised, also while
  // waiting for the lock.
  RecordPtr Run(const ProbeKind& kind, const ProbeTarget& target, const std::atomic<bool>* stop) {
    return kind.Run(*this, target, stop);
  }

  const kernels::Topology& topology() const { return topology_; }
  BufferPool& pool() { return pool_; }
  const ProbeSettings& settings() const { return settings_; }

  // Takes the host-wide lock for one run, waiting while another process probes.
  ProbeLockHold Acquire(const std::atomic<bool>* stop) { return ProbeLockHold(lock_, stop, on_lock_busy_); }
  // True, with `result` marked cancelled, if `stop` came while waiting for
  // the lock: the caller returns `result` as it is.
  template <class Result>
  bool Cancelled(const ProbeLockHold& hold, Result& result) const {
    if (hold.held()) return false;
    result.outcome = kernels::Outcome::kCancelled;
    result.reason = "stopped while waiting for another numaprobe process to release " + lock_.path();
    return true;
  }

  // `count` CPUs of the pair's node for one measurement: the pair's CPU
  // first, then other allowed CPUs of the node, distinct cores before SMT
  // siblings (a sibling shares the core's load ports and fill buffers).
  std::vector<int> NodeCpus(const MemoryPair& pair, int count) const;

 private:
  const kernels::Topology& topology_;
  BufferPool& pool_;
  ProbeSettings settings_;
  ProbeLock& lock_;
  std::function<void()> on_lock_busy_;
};

// A placement failure means the pages are not (or no longer) where they must
// be: the buffer is rebuilt from scratch next time rather than trusted.
bool IsPlacementOutcome(kernels::Outcome outcome);

}  // namespace numaprobe::daemon
