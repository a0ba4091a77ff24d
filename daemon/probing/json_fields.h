// SPDX-License-Identifier: Apache-2.0
// JSON pieces every kind's record uses (buffer and placement, discards,
// sample statistics), so `numaprobe probe --format json` reads the same for
// every kind.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "daemon/probing/probe_kind.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

nlohmann::json BufferToJson(const kernels::BufferInfo& buffer);
// outcome, reason, discards, clock and cpu_seconds of any record.
nlohmann::json CommonToJson(const ProbeRecord& record);
// median_/min_/max_/mad_<unit> and samples; figures null unless `ok`: a
// failed probe must not look like a number.
nlohmann::json StatsToJson(bool ok, const kernels::SampleStats& stats, const std::string& unit);

}  // namespace numaprobe::daemon
