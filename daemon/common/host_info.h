// Facts about the host that qualify every figure: they go into the JSON
// output, numaprobe_host_info and the baseline's fingerprint.
#pragma once

#include <string>

namespace numaprobe::daemon {

struct HostInfo {
  std::string cpu_model;     // from the topology (hwloc CPUModel)
  std::string microcode;     // /proc/cpuinfo "microcode", "" if absent
  std::string kernel;        // uname release
  std::string firmware;      // /sys/class/dmi/id/bios_version, "unknown" if unreadable or empty
  std::string thp;           // the bracketed mode of transparent_hugepage/enabled
  std::string clocksource;   // current clocksource (tsc; kvm-clock/hpet are slower)
  bool virtualized = false;  // the CPUID hypervisor bit, as /proc/cpuinfo's "hypervisor" flag
};

// `proc_root` and `sys_root` let tests read fixture trees.
HostInfo ReadHostInfo(const std::string& cpu_model, const std::string& proc_root = "/proc",
                      const std::string& sys_root = "/sys");

}  // namespace numaprobe::daemon
