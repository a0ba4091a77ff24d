// The flags that choose CPUs and nodes, shared by `probe` and `topology` so
// that `numaprobe topology` shows exactly the plan `numaprobe probe` would run.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "daemon/plan.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct PlanFlags {
  std::string cpus;
  std::string nodes;
  std::string c2c_cpus;
  bool per_cpu = false;

  void Register(CLI::App& command);
  // Parses the lists; a malformed list fails naming the flag.
  kernels::Expected<PlanOptions> ToOptions() const;
};

}  // namespace numaprobe::daemon
