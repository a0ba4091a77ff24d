// SPDX-License-Identifier: Apache-2.0
#include "kernels/cpu_idle.h"

#include <fstream>
#include <sstream>

#include "kernels/cpulist.h"
#include "kernels/file_read.h"

namespace numaprobe::kernels {

CpuTimes ReadCpuTimes(const std::string& proc_stat) {
  CpuTimes times;
  std::ifstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    // "cpuN user nice system idle iowait irq softirq steal guest guest_nice";
    // the aggregate "cpu " line and every other line are skipped. guest time
    // is already inside user, so it is not added again.
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
    if (!fields || cpu < 0) continue;
    if (!(fields >> steal)) steal = 0;  // absent before Linux 2.6.11
    CpuTicks ticks;
    ticks.busy = user + nice + system + irq + softirq + steal;
    ticks.total = ticks.busy + idle + iowait;
    times[cpu] = ticks;
  }
  return times;
}

std::map<int, double> BusyFractions(const CpuTimes& before, const CpuTimes& after) {
  std::map<int, double> busy;
  for (const auto& [cpu, end] : after) {
    const auto start = before.find(cpu);
    if (start == before.end() || end.total <= start->second.total || end.busy < start->second.busy) continue;
    const double share =
        static_cast<double>(end.busy - start->second.busy) / static_cast<double>(end.total - start->second.total);
    busy[cpu] = share > 1.0 ? 1.0 : share;
  }
  return busy;
}

std::vector<int> ReadCpuListFile(const std::string& path) {
  std::string text = ReadFirstLine(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return {};
  auto cpus = ParseCpuList(text);
  return cpus.ok() ? std::move(cpus).value() : std::vector<int>{};
}

}  // namespace numaprobe::kernels
