// SPDX-License-Identifier: Apache-2.0
// The CPUs this test process may pin to, ascending: the affinity mask
// intersected with the online CPUs, as kernels::Restriction reads them.
#pragma once

#include <vector>

#include "kernels/topology.h"

namespace numaprobe::kernels {

inline std::vector<int> AllowedCpus() {
  const Restriction restriction = Restriction::FromProcess();
  if (!restriction.cpus) return {};
  return {restriction.cpus->begin(), restriction.cpus->end()};
}

}  // namespace numaprobe::kernels
