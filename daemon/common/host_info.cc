#include "daemon/common/host_info.h"

#include <sys/utsname.h>

#include <fstream>
#include <sstream>
#include <string_view>

#include "kernels/file_read.h"

namespace numaprobe::daemon {
namespace {

using kernels::ReadFirstLine;

// "always [madvise] never" -> "madvise"
std::string BracketedChoice(const std::string& line) {
  const auto open = line.find('[');
  const auto close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(open + 1, close - open - 1);
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
  utsname uts{};
  if (uname(&uts) == 0) info.kernel = uts.release;
  info.firmware = ReadFirstLine(sys_root + "/class/dmi/id/bios_version");
  if (info.firmware.empty()) info.firmware = "unknown";
  info.thp = BracketedChoice(ReadFirstLine(sys_root + "/kernel/mm/transparent_hugepage/enabled"));
  info.clocksource = ReadFirstLine(sys_root + "/devices/system/clocksource/clocksource0/current_clocksource");
  return info;
}

}  // namespace numaprobe::daemon
