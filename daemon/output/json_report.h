// SPDX-License-Identifier: Apache-2.0
// Machine-readable output of `numaprobe topology` and `numaprobe probe`:
// every figure with its spread, page size, buffer size and placement
// verification, so that tests (tests/vm) and people can assert on it.
// Figures are null when a probe's outcome is not "ok".
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/probing/plan.h"
#include "daemon/probing/report.h"
#include "kernels/topology.h"

namespace numaprobe::daemon {

nlohmann::json TopologyToJson(const kernels::Topology& topology, const Plan& plan);
nlohmann::json ReportToJson(const ProbeReport& report, const kernels::Topology& topology, const Plan& plan);

}  // namespace numaprobe::daemon
