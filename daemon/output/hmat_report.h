// The firmware's advertised figures (ACPI HMAT) beside the measured ones: the
// comparison `numaprobe probe` prints (table and JSON), the landing page shows
// and /metrics exports as ratios. A pair gets a ratio only when the firmware
// advertises a figure for its CPU node (hmat.h: HmatFor) and the pair was
// measured; nothing is compared with another initiator's figure.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/hmat.h"
#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

struct HmatComparison {
  int cpu_node = -1;
  int mem_node = -1;
  const HmatTarget* advertised = nullptr;  // points into the HMAT it was built from
  // Measured medians (several CPUs of one node: the median of their figures).
  std::optional<double> latency_seconds;
  std::optional<double> read_bytes_per_second;   // bandwidth op "read"
  std::optional<double> write_bytes_per_second;  // bandwidth op "write" (non-temporal stores)
  // measured / advertised; latency over the advertised read latency (a
  // pointer chase only loads).
  std::optional<double> latency_ratio;
  std::optional<double> read_bandwidth_ratio;
  std::optional<double> write_bandwidth_ratio;
};

// One entry per measured (cpu_node, mem_node) pair the HMAT has a figure for,
// sorted by pair. `records` may hold any kinds; only successful latency and
// bandwidth records count.
std::vector<HmatComparison> CompareWithHmat(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

// "Advertised by the firmware (ACPI HMAT)" and "Measured / advertised": none
// when the host has no HMAT.
std::vector<ReportSection> HmatSections(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

// {"targets": [...], "measured": [...]}, figures in seconds and bytes per second.
nlohmann::json HmatToJson(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

}  // namespace numaprobe::daemon
