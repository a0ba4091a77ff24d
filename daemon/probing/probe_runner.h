// SPDX-License-Identifier: Apache-2.0
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
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/probing/buffer_pool.h"
#include "daemon/probing/cpu_chooser.h"
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
              std::function<void()> on_lock_busy = {}, CpuChooserSources cpu_sources = {})
      : topology_(topology),
        chooser_(topology, std::move(cpu_sources)),
        pool_(pool),
        settings_(std::move(settings)),
        lock_(lock),
        on_lock_busy_(std::move(on_lock_busy)) {}

  // Runs one target of `kind`; kCancelled if `stop` is raised, also while
  // waiting for the lock. `found_threads`: what the kind's thread search found
  // for the target's series before (ProbeKind::FoundThreadsOf, kept by the
  // daemon's results model), none at first and at a terminal. `published`:
  // the latest successful records the caller holds, of every kind (the
  // daemon's Snapshot::figures; at a terminal, this invocation's records so
  // far), for a kind whose figure is read against another kind's.
  RecordPtr Run(const ProbeKind& kind, const ProbeTarget& target, const std::atomic<bool>* stop,
                std::optional<int> found_threads = std::nullopt, std::vector<RecordPtr> published = {}) {
    found_threads_ = found_threads;
    published_ = std::move(published);
    return kind.Run(*this, target, stop);
  }
  // The running target's `found_threads` (Run).
  std::optional<int> found_threads() const { return found_threads_; }
  // The records the caller held when the running target started (Run). A
  // kind reads them through the kind-neutral ProbeKind methods
  // (AdvertisedOf), never by another kind's name.
  const std::vector<RecordPtr>& published() const { return published_; }
  // Frees the prepared buffers unless the pool keeps them (BufferPool): the
  // daemon calls it after each visit (scheduler.h, SharesBuffers), so it
  // holds no probe memory while it waits for the next. Not while a probe runs.
  void ReleaseBuffers() { pool_.EndProbe(); }

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

  // `count` CPUs of the pair's node for one measurement, the measuring CPU
  // first (CpuChooser: an idle one when the plan picked the pair's CPU). A
  // move off the planned CPU is logged: at info when it changes, else debug.
  std::vector<int> ChooseCpus(const MemoryPair& pair, int count);
  // Busy share of each CPU over the next `window` (CpuChooser::SampleBusy).
  std::map<int, double> SampleBusy(std::chrono::milliseconds window) const { return chooser_.SampleBusy(window); }

 private:
  const kernels::Topology& topology_;
  CpuChooser chooser_;
  std::map<int, int> last_cpu_of_node_;  // for logging changes only
  BufferPool& pool_;
  ProbeSettings settings_;
  ProbeLock& lock_;
  std::function<void()> on_lock_busy_;
  std::optional<int> found_threads_;
  std::vector<RecordPtr> published_;
};

// A placement failure means the pages are not (or no longer) where they must
// be: the buffer is rebuilt from scratch next time rather than trusted.
bool IsPlacementOutcome(kernels::Outcome outcome);

}  // namespace numaprobe::daemon
