// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/fact_root_flags.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

namespace numaprobe::daemon {
namespace {

// "" if `path` is a directory, else what is wrong with it.
std::string NotADirectory(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) return "no such directory: " + path;
  if (!std::filesystem::is_directory(status)) return "not a directory: " + path;
  return "";
}

// `root` + "/" + `name` without doubling the slash of "/".
std::string Under(const std::string& root, const char* name) {
  return root.empty() || root.back() != '/' ? root + "/" + name : root + name;
}

}  // namespace

void FactRootFlags::Register(CLI::App& sub) {
  const CLI::Validator directory(NotADirectory, "");
  procfs_option_ = sub.add_option("--path.procfs", procfs,
                                  "procfs mount point host facts are read from (default: proc under --path.rootfs); "
                                  "in a container, the host's /proc mounted there, e.g. /host/proc")
                       ->check(directory)
                       ->type_name("DIR");
  sysfs_option_ = sub.add_option("--path.sysfs", sysfs,
                                 "sysfs mount point host facts are read from (default: sys under --path.rootfs); "
                                 "in a container, the host's /sys mounted there, e.g. /host/sys")
                      ->check(directory)
                      ->type_name("DIR");
  sub.add_option("--path.rootfs", rootfs,
                 "Root whose proc and sys hold host facts when --path.procfs or --path.sysfs is not given; "
                 "in a container, the host's / mounted there, e.g. /host")
      ->check(directory)
      ->type_name("DIR");
}

std::string FactRootFlags::Resolve(FactRoots& roots) const {
  // Given: CLI11 checked it. Implied by --path.rootfs: checked here.
  const auto resolve = [&](const CLI::Option* option, const std::string& given, const char* name, const char* flag,
                           std::string& out) -> std::string {
    if (option != nullptr && option->count() > 0) {
      out = given;
      return "";
    }
    out = Under(rootfs, name);
    const std::string problem = NotADirectory(out);
    return problem.empty() ? "" : fmt::format("--path.rootfs={}: {} (or give {})", rootfs, problem, flag);
  };
  if (auto error = resolve(procfs_option_, procfs, "proc", "--path.procfs", roots.proc); !error.empty()) return error;
  return resolve(sysfs_option_, sysfs, "sys", "--path.sysfs", roots.sys);
}

}  // namespace numaprobe::daemon
