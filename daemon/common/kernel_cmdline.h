// SPDX-License-Identifier: Apache-2.0
// The kernel command line as host facts: the parameters that change NUMA,
// memory and power behaviour by name ("cmdline.mitigations" -> "off"), the
// rest as one hash, so adding `quiet` is seen without exporting every word.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace numaprobe::daemon {

// The watched parameters' names, as they are written on the command line.
const std::vector<std::string_view>& WatchedCmdlineParameters();

// "cmdline.<name>" -> value for every watched parameter ("unset" when absent,
// "on" for a bare flag such as `nohz_full`; repeated ones joined with ','), and
// "cmdline.other_hash" -> a stable hex hash of the other parameters in order,
// BOOT_IMAGE and initrd excepted (they follow the kernel version, a fact of its
// own).
std::map<std::string, std::string> CmdlineFacts(std::string_view cmdline);

}  // namespace numaprobe::daemon
