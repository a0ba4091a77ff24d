// SPDX-License-Identifier: Apache-2.0
// The host the probes were planned on, as the scheduler looks at it: its
// HostInfo, read when a plan is adopted, and every fact as it is now (the
// planned host's HostFacts and the runtime facts of the CPUs that probe),
// read every round and on SIGHUP for the results model to compare with the
// baseline's. The test hooks' overrides apply to both: a test changes the
// kernel, microcode or numaprobe_version the baseline sees without changing
// the machine (common/test_hooks.h).
//
// Thread safety: not thread-safe; owned by the scheduler loop.
#pragma once

#include <map>
#include <vector>

#include "daemon/common/host_info.h"
#include "daemon/common/runtime_facts.h"
#include "daemon/common/test_hooks.h"
#include "daemon/probing/probe_target.h"
#include "daemon/serve/host_watch.h"
#include "daemon/serve/results/host_record.h"
#include "kernels/result.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

class HostObserver {
 public:
  // `roots`: where facts are read (--path.procfs, --path.sysfs); `hooks`:
  // what a test overrides.
  HostObserver(FactRoots roots, TestHooks hooks);

  // A new plan on `topology` whose runs probe `targets`: reads the host's
  // HostInfo (overridden) and fixes the probing CPUs whose runtime facts
  // Now() reads until the next plan.
  const HostInfo& Plan(const kernels::Topology& topology, const std::vector<ProbeTarget>& targets);
  // Every fact as it is now: HostFacts of the planned host with `pages` and
  // the runtime facts.
  HostObservation Now(kernels::PagePolicy pages);
  // The runtime facts Now() last read, for the snapshot.
  const RuntimeFacts& last() const { return watch_.last(); }

 private:
  TestHooks hooks_;
  HostWatch watch_;
  HostInfo host_;
  std::map<int, std::vector<int>> probe_cpus_by_node_;
};

}  // namespace numaprobe::daemon
