// SPDX-License-Identifier: Apache-2.0
// Which CPUs are idle now, from the kernel's per-CPU time counters.
//
// A probe pinned to a CPU that another task keeps busy gets preempted (the
// daemon probes at SCHED_IDLE) and every sample is discarded, while another
// CPU of the same node sits idle. Callers take a CpuTimes snapshot, wait a
// short window, take another, and prefer the CPUs with the least busy time in
// between. /proc/stat counts in USER_HZ ticks (10 ms): a 100 ms window tells a
// saturated CPU (~10 busy ticks) from an idle one (~0), which is all we need.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace numaprobe::kernels {

struct CpuTicks {
  unsigned long long busy = 0;   // user+nice+system+irq+softirq+steal
  unsigned long long total = 0;  // busy + idle + iowait
};

// cpu id -> ticks; empty if the file cannot be read or parsed.
using CpuTimes = std::map<int, CpuTicks>;
CpuTimes ReadCpuTimes(const std::string& proc_stat = "/proc/stat");

// cpu id -> share of the window [0, 1] each CPU was busy, for the CPUs in
// both snapshots whose counters advanced. A CPU missing from the result has
// no information (it went offline, or the window was too short).
std::map<int, double> BusyFractions(const CpuTimes& before, const CpuTimes& after);

// A kernel CPU list file (/sys/devices/system/cpu/isolated, .../nohz_full):
// its CPUs, or empty if the file is missing, empty or unparsable.
std::vector<int> ReadCpuListFile(const std::string& path);

}  // namespace numaprobe::kernels
