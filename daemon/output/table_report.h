// SPDX-License-Identifier: Apache-2.0
// Human-readable output of `numaprobe topology` and `numaprobe probe`: aligned
// matrices like `mlc --latency_matrix` / `--bandwidth_matrix` / `--c2c_latency`.
#pragma once

#include <string>

#include "daemon/probing/plan.h"
#include "daemon/probing/report.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

std::string FormatTopology(const kernels::Topology& topology, const Plan& plan);
std::string FormatReport(const ProbeReport& report);

}  // namespace numaprobe::daemon
