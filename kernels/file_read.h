// SPDX-License-Identifier: Apache-2.0
// Reading a whole small file: the sysfs/procfs files the kernels and the
// daemon consult (cpu and node lists, /proc/self/stat, hugetlb counters,
// DMI strings) and the daemon's state file. One reader instead of one
// ifstream helper per file, so every caller gets the same answers: a
// directory or an unreadable file is a failure, never an empty text.
//
// No size limit and no file-type check: these are files the kernel or
// numaprobe itself writes. A path an operator names (the config file) goes
// through daemon/config's ReadConfigText, which refuses FIFOs and huge files.
#pragma once

#include <optional>
#include <string>

namespace numaprobe::kernels {

// Appends the file's whole text to `out`; 0 on success, otherwise the errno
// of the failing open or read (ENOENT: the file does not exist), so a caller
// can tell "missing" from "unreadable".
int ReadWholeFile(const std::string& path, std::string& out);

// The file's whole text; nullopt if it cannot be opened or read.
std::optional<std::string> ReadSmallFile(const std::string& path);

// The file's first line without its newline; "" if the file is missing,
// unreadable or empty (sysfs attributes are one line).
std::string ReadFirstLine(const std::string& path);

}  // namespace numaprobe::kernels
