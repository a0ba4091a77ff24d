// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/host_observer.h"

#include <utility>

#include "daemon/common/version.h"
#include "daemon/serve/state.h"

namespace numaprobe::daemon {

HostObserver::HostObserver(FactRoots roots, TestHooks hooks) : hooks_(std::move(hooks)), watch_(std::move(roots)) {}

const HostInfo& HostObserver::Plan(const kernels::Topology& topology, const std::vector<ProbeTarget>& targets) {
  probe_cpus_by_node_ = ProbeCpusByNode(targets, topology);
  host_ = watch_.ReadInfo(topology.cpu_model);
  ApplyHostOverrides(hooks_, host_);
  return host_;
}

HostObservation HostObserver::Now(kernels::PagePolicy pages) {
  auto facts = HostFacts(host_, pages, kVersionFact);
  // ApplyHostOverrides covers HostInfo's fields; the version is the binary's.
  if (const auto it = hooks_.host_overrides.find("numaprobe_version"); it != hooks_.host_overrides.end()) {
    facts["numaprobe_version"] = it->second;
  }
  return watch_.Observe(std::move(facts), probe_cpus_by_node_);
}

}  // namespace numaprobe::daemon
