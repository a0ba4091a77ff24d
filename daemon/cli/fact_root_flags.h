// SPDX-License-Identifier: Apache-2.0
// --path.procfs, --path.sysfs and --path.rootfs, named as node_exporter names
// them: where the commands that read host facts (serve, probe) find procfs and
// sysfs. In a container the host's are mounted elsewhere (-v /proc:/host/proc
// -v /sys:/host/sys, or the host's / at /host); without them numaprobe reads
// its own /proc and /sys. The topology itself (hwloc) is always the process's
// own view.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "daemon/common/runtime_facts.h"

namespace numaprobe::daemon {

struct FactRootFlags {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
  std::string rootfs = "/";

  void Register(CLI::App& sub);

  // The trees facts are read from: --path.procfs and --path.sysfs when given,
  // else proc and sys under --path.rootfs. "" with `roots` filled, or a usage
  // error naming the flag (a directory that --path.rootfs implies is missing).
  std::string Resolve(FactRoots& roots) const;

 private:
  const CLI::Option* procfs_option_ = nullptr;
  const CLI::Option* sysfs_option_ = nullptr;
};

}  // namespace numaprobe::daemon
