// SPDX-License-Identifier: Apache-2.0
// The firmware's advertised figures (ACPI HMAT) beside the measured ones: the
// comparison `numaprobe probe` prints (table and JSON), the landing page shows
// and /metrics exports as ratios. A pair gets a ratio only when the firmware
// advertises a figure for its CPU node (hmat.h: HmatFor) and the pair was
// measured; nothing is compared with another initiator's figure. Which
// measured figure compares with which advertised one is each kind's answer
// (ProbeKind::AdvertisedOf); this file knows only the HMAT's attributes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/common/hmat.h"
#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

// A /metrics family of measured / advertised ratios.
struct HmatRatioFamily {
  const char* name;
  const char* help;
};

// How the comparison shows one attribute. Only these attributes are compared,
// in this order; a figure of another attribute is not shown.
struct ComparedAttribute {
  HmatAttribute attribute;
  const char* column;        // in the "Measured / advertised" table
  const char* measured_key;  // JSON: the measured median
  const char* ratio_key;     // JSON: measured / advertised
  const HmatRatioFamily* family;
  const char* op;  // the family's op label; "" for none
};
const std::vector<ComparedAttribute>& ComparedAttributes();

struct HmatComparison {
  int cpu_node = -1;
  int mem_node = -1;
  const HmatTarget* advertised = nullptr;  // points into the HMAT it was built from
  // Measured medians by attribute (several records of one pair: the median of
  // their figures), and measured / advertised where the firmware gives the
  // attribute.
  std::map<HmatAttribute, double> measured;
  std::map<HmatAttribute, double> ratio;

  std::optional<double> MeasuredOf(HmatAttribute attribute) const;
  std::optional<double> RatioOf(HmatAttribute attribute) const;
};

// One entry per measured (cpu_node, mem_node) pair the HMAT has a figure for,
// sorted by pair. `records` may hold any kinds; only successful records with
// an advertised counterpart count.
std::vector<HmatComparison> CompareWithHmat(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

// "Advertised by the firmware (ACPI HMAT)" and "Measured / advertised": none
// when the host has no HMAT.
std::vector<ReportSection> HmatSections(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

// {"targets": [...], "measured": [...]}, figures in seconds and bytes per second.
nlohmann::json HmatToJson(const std::vector<HmatTarget>& hmat, const std::vector<RecordPtr>& records);

}  // namespace numaprobe::daemon
