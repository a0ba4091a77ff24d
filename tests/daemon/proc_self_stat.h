// SPDX-License-Identifier: Apache-2.0
// Whether /proc/self/stat describes this process. qemu-user, which runs the
// arm64 cross build's unit tests on the build machine, answers it with a line
// of its own in which every field but the pid, name, parent and stack start is
// 0, so a figure read from it (resident memory, threads) is 0 whatever the
// process does. A live process on a real kernel always has at least one
// thread: a thread count of 0 says the file is not the kernel's.
#pragma once

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace numaprobe::daemon {

inline bool ProcSelfStatIsReal() {
  std::ifstream in("/proc/self/stat");
  const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return false;
  // After "pid (name) " come field 3 (state) onwards; num_threads is field 20.
  std::istringstream fields(line.substr(name_end + 1));
  std::string field;
  for (int i = 3; i <= 20 && fields >> field; ++i) {
    if (i == 20) return field != "0";
  }
  return false;
}

}  // namespace numaprobe::daemon

#define NUMAPROBE_SKIP_WITHOUT_REAL_PROC_SELF_STAT()                                                    \
  if (!::numaprobe::daemon::ProcSelfStatIsReal())                                                       \
  GTEST_SKIP() << "/proc/self/stat is not the kernel's (qemu-user answers it with zeros): the process " \
                  "figures cannot be read here"
