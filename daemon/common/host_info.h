// SPDX-License-Identifier: Apache-2.0
// Facts about the host that qualify every figure: they go into the JSON
// output, numaprobe_host_info and the baseline's fingerprint.
#pragma once

#include <string>
#include <vector>

#include "daemon/common/hmat.h"
#include "daemon/common/weighted_interleave.h"

namespace numaprobe::daemon {

struct HostInfo {
  std::string cpu_model;     // from the topology (hwloc CPUModel)
  std::string microcode;     // /proc/cpuinfo "microcode", "" if absent
  std::string kernel;        // uname release
  std::string firmware;      // /sys/class/dmi/id/bios_version, "unknown" if unreadable or empty
  std::string thp;           // the bracketed mode of transparent_hugepage/enabled
  std::string clocksource;   // current clocksource (tsc; kvm-clock/hpet are slower)
  bool virtualized = false;  // the CPUID hypervisor bit, as /proc/cpuinfo's "hypervisor" flag
  // "none" on bare metal; else /sys/hypervisor/type (xen) or the DMI vendor
  // and product ("QEMU Standard PC (i440FX + PIIX, 1996)").
  std::string hypervisor;
  // CPU-bearing NUMA nodes per package: the SNC (Intel) or NPS (AMD) mode,
  // "1" without one; "unknown" if sysfs does not say.
  std::string nodes_per_package;
  std::vector<HmatTarget> hmat;  // the firmware's advertised figures (hmat.h)
  // The kernel's interleave weights (weighted_interleave.h); nullopt before Linux 6.9.
  std::optional<WeightedInterleave> weighted_interleave;
};

// `proc_root` and `sys_root` let tests read fixture trees.
HostInfo ReadHostInfo(const std::string& cpu_model, const std::string& proc_root = "/proc",
                      const std::string& sys_root = "/sys");

}  // namespace numaprobe::daemon
