// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/json_fields.h"

namespace numaprobe::daemon {

using nlohmann::json;
namespace k = kernels;

json BufferToJson(const k::BufferInfo& b) {
  const auto& p = b.placement;
  return {{"node", b.node},
          {"bytes", b.bytes},
          // No page size for a buffer that was never allocated.
          {"page_size", b.bytes == 0 ? json(nullptr) : json(k::PageSizeName(b))},
          // The same in bytes: the host's base, THP or hugetlb page (kernels/page_sizes.h).
          {"page_bytes", b.bytes == 0 ? json(nullptr) : json(b.page_bytes)},
          {"huge_fraction", b.huge_fraction},
          {"placement",
           {{"verified", p.verified()},
            {"expected_node", p.expected_node},
            {"pages_checked", p.pages_checked},
            {"pages_misplaced", p.pages_misplaced},
            {"pages_unknown", p.pages_unknown},
            {"observed_node", p.observed_node},
            {"method", p.method}}}};
}

json CommonToJson(const ProbeRecord& record) {
  const k::Discards& d = record.discards();
  const k::ClockReport& c = record.clock();
  return {{"outcome", k::OutcomeName(record.outcome())},
          {"reason", record.reason()},
          {"discards", {{"context_switch", d.context_switch}, {"migration", d.migration}, {"timeout", d.timeout}}},
          // How finely the clock timed the samples: with coarse_clock, why the figure is missing.
          {"clock",
           {{"resolution_seconds", c.resolution_seconds},
            {"shortest_sample_seconds", c.shortest_sample_seconds},
            {"min_steps_per_sample", c.min_steps_per_sample}}},
          {"cpu_seconds", record.cpu_seconds()}};
}

json StatsToJson(bool ok, const k::SampleStats& s, const std::string& unit) {
  auto figure = [ok](double value) { return ok ? json(value) : json(nullptr); };
  return {{"median_" + unit, figure(s.median)},
          {"min_" + unit, figure(s.min)},
          {"max_" + unit, figure(s.max)},
          {"mad_" + unit, figure(s.mad)},
          {"samples", s.n}};
}

}  // namespace numaprobe::daemon
