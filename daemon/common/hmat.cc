// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/hmat.h"

#include <algorithm>

#include <fmt/format.h>

#include "daemon/common/sysfs_values.h"

namespace numaprobe::daemon {
namespace {

// Latency in nanoseconds, bandwidth in MiB/s: the kernel divides the HMAT's
// bytes per second by 2^20 (a QEMU hmat-lb bandwidth of 23G reads 23552).
std::optional<double> SecondsFromNs(const std::string& path) {
  const auto ns = ReadNumber(path);
  if (!ns || *ns == 0) return std::nullopt;
  return static_cast<double>(*ns) * 1e-9;
}

std::optional<double> BytesPerSecondFromMiB(const std::string& path) {
  const auto mib = ReadNumber(path);
  if (!mib || *mib == 0) return std::nullopt;
  return static_cast<double>(*mib) * 1024 * 1024;
}

}  // namespace

bool HmatTarget::advertises(int cpu_node) const {
  return std::find(initiators.begin(), initiators.end(), cpu_node) != initiators.end();
}

const std::optional<double>& HmatTarget::Of(HmatAttribute attribute) const {
  switch (attribute) {
    case HmatAttribute::kReadLatency:
      return read_latency_seconds;
    case HmatAttribute::kWriteLatency:
      return write_latency_seconds;
    case HmatAttribute::kReadBandwidth:
      return read_bandwidth_bytes_per_second;
    case HmatAttribute::kWriteBandwidth:
      return write_bandwidth_bytes_per_second;
  }
  static const std::optional<double> kNone;  // a value outside the enum
  return kNone;
}

std::vector<HmatTarget> ReadHmat(const std::string& sys_root) {
  const std::string nodes = sys_root + "/devices/system/node";
  std::vector<HmatTarget> hmat;
  for (const int node : NumberedEntries(nodes, "node")) {
    for (const int access : NumberedEntries(fmt::format("{}/node{}", nodes, node), "access")) {
      const std::string dir = fmt::format("{}/node{}/access{}/initiators", nodes, node, access);
      HmatTarget t;
      t.mem_node = node;
      t.access_class = access;
      t.initiators = NumberedEntries(dir, "node");
      t.read_latency_seconds = SecondsFromNs(dir + "/read_latency");
      t.write_latency_seconds = SecondsFromNs(dir + "/write_latency");
      t.read_bandwidth_bytes_per_second = BytesPerSecondFromMiB(dir + "/read_bandwidth");
      t.write_bandwidth_bytes_per_second = BytesPerSecondFromMiB(dir + "/write_bandwidth");
      const bool any = t.read_latency_seconds || t.write_latency_seconds || t.read_bandwidth_bytes_per_second ||
                       t.write_bandwidth_bytes_per_second;
      // Only the two classes the kernel defines; a directory without figures
      // (no HMAT entry for this target) is not an advertisement.
      if ((access == 0 || access == 1) && any) hmat.push_back(std::move(t));
    }
  }
  return hmat;
}

const HmatTarget* HmatFor(const std::vector<HmatTarget>& hmat, int cpu_node, int mem_node) {
  const HmatTarget* any = nullptr;
  for (const HmatTarget& t : hmat) {
    if (t.mem_node != mem_node || !t.advertises(cpu_node)) continue;
    if (t.access_class == 1) return &t;
    any = &t;
  }
  return any;
}

}  // namespace numaprobe::daemon
