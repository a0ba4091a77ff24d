// Test-only hooks, read from the environment, for integration tests that need
// a changed host (a new kernel, microcode, ...) or regressed figures without
// changing the machine:
//   NUMAPROBE_TEST_HOST_OVERRIDES="kernel=6.6.13-amd64,microcode=0x2"
//   NUMAPROBE_TEST_SCALE_LATENCY=1.15, NUMAPROBE_TEST_SCALE_BANDWIDTH=0.8
//   NUMAPROBE_TEST_FACT_ROOT=DIR: host facts (host_info.h, runtime_facts.h,
//   hmat.h) are read from DIR/proc and DIR/sys, a fixture tree a test edits
// They are honoured only together with NUMAPROBE_TEST_MODE=1; set without it
// they are an error (`serve` refuses to start), so a production host cannot
// run with faked figures by accident.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "daemon/common/host_info.h"
#include "daemon/common/runtime_facts.h"

namespace numaprobe::daemon {

struct TestHooks {
  // field -> value: kernel, microcode, firmware, cpu_model, numaprobe_version.
  std::map<std::string, std::string> host_overrides;
  double latency_scale = 1;    // multiplies every latency figure
  double bandwidth_scale = 1;  // multiplies every bandwidth figure
  bool fault_injection_active() const { return latency_scale != 1 || bandwidth_scale != 1; }
  std::string fact_root;  // "" : the real /proc and /sys
  bool active() const { return fault_injection_active() || !host_overrides.empty() || !fact_root.empty(); }
};

using GetEnv = std::function<const char*(const char*)>;

// Fills `hooks` from the environment; returns "" or an error naming the
// variable (a hook without NUMAPROBE_TEST_MODE=1, a malformed value).
std::string ReadTestHooks(TestHooks& hooks, const GetEnv& getenv);
std::string ReadTestHooks(TestHooks& hooks);

// Where host facts are read: the fixture tree of NUMAPROBE_TEST_FACT_ROOT, else /proc and /sys.
FactRoots FactRootsOf(const TestHooks& hooks);

// Applies the overrides of the HostInfo fields (kernel, microcode, firmware, cpu_model).
void ApplyHostOverrides(const TestHooks& hooks, HostInfo& host);

}  // namespace numaprobe::daemon
