// SPDX-License-Identifier: Apache-2.0
// What the firmware advertises about each memory node (ACPI HMAT, as the
// kernel exposes it without root under
// /sys/devices/system/node/node<T>/access{0,1}/initiators/): read and write
// latency and bandwidth from the best initiators of a class to target node T.
// Class 0 ("any") is the best of every initiator, CPUs or not; class 1
// ("cpu") is the best of the CPU initiators. The kernel exposes only the best
// class per target, not every initiator's figure, so a pair whose CPU node is
// not among the initiators has no advertised figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace numaprobe::daemon {

// The four figures the HMAT advertises per target and initiator class.
enum class HmatAttribute { kReadLatency, kWriteLatency, kReadBandwidth, kWriteBandwidth };

struct HmatTarget {
  int mem_node = -1;
  int access_class = 0;         // 0: any initiator, 1: CPU initiators
  std::vector<int> initiators;  // node ids linked beside the figures
  std::optional<double> read_latency_seconds;
  std::optional<double> write_latency_seconds;
  std::optional<double> read_bandwidth_bytes_per_second;
  std::optional<double> write_bandwidth_bytes_per_second;

  // "any" or "cpu": the initiator_class label.
  const char* class_name() const { return access_class == 0 ? "any" : "cpu"; }
  bool advertises(int cpu_node) const;
  // The advertised figure of `attribute`, if the firmware gives one.
  const std::optional<double>& Of(HmatAttribute attribute) const;
};

// Every node's access classes, by node then class; empty when the firmware
// has no HMAT (most hosts and guests) or the kernel predates it. An absent or
// unparsable figure stays unset; it is never 0.
std::vector<HmatTarget> ReadHmat(const std::string& sys_root = "/sys");

// The entry whose figures apply to measurements from `cpu_node` to `mem_node`:
// the CPU class if it lists `cpu_node`, else the any class if it does; nullptr
// if neither does (the firmware's figure is for other initiators).
const HmatTarget* HmatFor(const std::vector<HmatTarget>& hmat, int cpu_node, int mem_node);

}  // namespace numaprobe::daemon
