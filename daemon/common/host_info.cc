// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/host_info.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "daemon/common/printable_text.h"
#include "daemon/common/sysfs_values.h"
#include "kernels/cpulist.h"
#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

using kernels::ReadFirstLine;

std::string Hypervisor(const std::string& sys_root, bool virtualized) {
  if (!virtualized) return "none";
  if (std::string type = ReadFirstLine(sys_root + "/hypervisor/type"); !type.empty()) return type;
  const std::string vendor = ReadFirstLine(sys_root + "/class/dmi/id/sys_vendor");
  const std::string product = ReadFirstLine(sys_root + "/class/dmi/id/product_name");
  if (vendor.empty() && product.empty()) return "unknown";
  return vendor.empty() || product.empty() ? vendor + product : vendor + " " + product;
}

// The most CPU-bearing nodes any package holds (the first CPU of each node
// names its package).
std::string NodesPerPackage(const std::string& sys_root) {
  const std::string nodes = sys_root + "/devices/system/node";
  std::map<unsigned long long, int> per_package;
  for (const int node : NumberedEntries(nodes, "node")) {
    const auto cpus = kernels::ParseCpuList(ReadFirstLine(fmt::format("{}/node{}/cpulist", nodes, node)));
    if (!cpus.ok() || cpus.value().empty()) continue;
    const auto package = ReadNumber(
        fmt::format("{}/devices/system/cpu/cpu{}/topology/physical_package_id", sys_root, cpus.value().front()));
    if (!package) return "unknown";
    ++per_package[*package];
  }
  int most = 0;
  for (const auto& [package, count] : per_package) most = std::max(most, count);
  return most == 0 ? "unknown" : std::to_string(most);
}

}  // namespace

HostInfo ReadHostInfo(const std::string& cpu_model, const std::string& proc_root, const std::string& sys_root) {
  HostInfo info;
  info.cpu_model = cpu_model;
  std::ifstream cpuinfo(proc_root + "/cpuinfo");
  // The first processor's block is enough: microcode and flags are per host.
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string_view key(line.data(), colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "microcode") info.microcode = value;
    if (key == "flags") info.virtualized = (" " + value + " ").find(" hypervisor ") != std::string::npos;
  }
  // uname(2)'s release, read from the tree so that a fixture names it too.
  info.kernel = ReadFirstLine(proc_root + "/sys/kernel/osrelease");
  if (info.kernel.empty()) info.kernel = "unknown";
  info.firmware = ReadFirstLine(sys_root + "/class/dmi/id/bios_version");
  if (info.firmware.empty()) info.firmware = "unknown";
  info.hypervisor = Hypervisor(sys_root, info.virtualized);
  info.nodes_per_package = NodesPerPackage(sys_root);
  info.hmat = ReadHmat(sys_root);
  info.weighted_interleave = ReadWeightedInterleave(sys_root);
  info.thp = BracketedChoice(ReadFirstLine(sys_root + "/kernel/mm/transparent_hugepage/enabled"));
  info.clocksource = ReadFirstLine(sys_root + "/devices/system/clocksource/clocksource0/current_clocksource");
  for (std::string* text : {&info.cpu_model, &info.microcode, &info.kernel, &info.firmware, &info.thp,
                            &info.clocksource, &info.hypervisor, &info.nodes_per_package}) {
    *text = PrintableText(*text);
  }
  return info;
}

}  // namespace numaprobe::daemon
