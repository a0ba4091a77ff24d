// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/task_limits.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace numaprobe::daemon {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// Where this process's pids controller keeps its files: the cgroup v2 path
// ("0::/system.slice/numaprobe.service") under the unified mount, or, on a
// hybrid host, the cgroup v1 pids hierarchy's path under <root>/pids.
// Directories from the process's own cgroup up to the root.
std::vector<std::string> PidsDirectories(const std::string& root, const std::string& own_cgroup) {
  std::string v2;
  std::string v1;
  std::ifstream file(own_cgroup);
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    const std::size_t pids = line.find(":pids:");
    if (pids != std::string::npos) v1 = line.substr(pids + 6);
  }
  const std::string base = v1.empty() ? root : root + "/pids";
  std::string path = v1.empty() ? v2 : v1;
  std::vector<std::string> dirs;
  while (!path.empty() && path != "/") {
    dirs.push_back(base + path);
    path = path.substr(0, path.rfind('/'));
  }
  // The mount's root last: in a container with its own cgroup namespace the
  // path reads "/" and the container's limit is the root's pids.max (on the
  // host the root cgroup has none, so this adds nothing there).
  dirs.push_back(base);
  return dirs;
}

std::string ThreadCount() {
  std::ifstream file("/proc/self/status");
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("Threads:", 0) == 0) {
      std::istringstream value(line.substr(8));
      std::string count;
      value >> count;
      return count;
    }
  }
  return "";
}

}  // namespace

std::string DescribeTaskLimits(const std::string& cgroup_root, const std::string& own_cgroup) {
  std::string limits;
  rlimit nproc{};
  if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY) {
    limits += "RLIMIT_NPROC " + std::to_string(nproc.rlim_cur) + " (per user)";
  }
  // The nearest pids.max up the hierarchy that is not "max" is the one that binds.
  for (const std::string& dir : PidsDirectories(cgroup_root, own_cgroup)) {
    const std::string max = FirstLine(dir + "/pids.max");
    if (!max.empty() && max != "max") {
      limits += std::string(limits.empty() ? "" : ", ") + "cgroup pids.max " + max + " (" +
                FirstLine(dir + "/pids.current") + " in use, " + dir + ")";
      break;
    }
  }
  if (limits.empty()) limits = "no RLIMIT_NPROC or cgroup pids.max found (kernel.threads-max? memory?)";
  return "task limits: " + limits + "; this process has " + ThreadCount() + " threads";
}

}  // namespace numaprobe::daemon
