// SPDX-License-Identifier: Apache-2.0
// The limits on how many tasks (threads and processes) this process may
// have, for the log line that explains why a thread could not be created:
// "task limits: RLIMIT_NPROC 24 (per user), cgroup pids.max 24 (24 in use);
// this process has 7 threads".
#pragma once

#include <string>

namespace numaprobe::daemon {

// Reads getrlimit(RLIMIT_NPROC), the pids controller of this process's cgroup
// (cgroup v2, or v1's pids hierarchy on hybrid hosts, under `cgroup_root`)
// and /proc/self/status; a limit that is absent or unlimited is left out.
// `own_cgroup` names the file listing this process's cgroups (tests pass their own).
std::string DescribeTaskLimits(const std::string& cgroup_root = "/sys/fs/cgroup",
                               const std::string& own_cgroup = "/proc/self/cgroup");

}  // namespace numaprobe::daemon
