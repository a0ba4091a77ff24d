// SPDX-License-Identifier: Apache-2.0
// Small readers of sysfs shapes shared by the host facts: numbered entries
// (node0, node1 under /sys/devices/system/node, mc0 under edac/mc, the
// initiator links beside HMAT figures), one-number attributes, and the
// "always [madvise] never" choice lists.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace numaprobe::daemon {

// The ids of entries named "<prefix><number>" in `directory`, sorted; empty if the directory is missing or unreadable.
std::vector<int> NumberedEntries(const std::string& directory, const std::string& prefix);

// A sysfs attribute holding one unsigned number; nullopt if missing or not a number.
std::optional<unsigned long long> ReadNumber(const std::string& path);

// "always [madvise] never" -> "madvise"; a line without brackets as it is.
std::string BracketedChoice(const std::string& line);

}  // namespace numaprobe::daemon
