// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the YAML config parser (ParseConfig). Every input must end in a
// Config or a non-empty error list, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/config/config.h"
#include "daemon/probing/probe_table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numaprobe::daemon;
  const ConfigResult r = ParseConfig(std::string_view(reinterpret_cast<const char*>(data), size), ProbeTableSections());
  if (const auto* errors = std::get_if<std::vector<ConfigError>>(&r)) {
    if (errors->empty()) std::abort();  // a failure must say why
    for (const ConfigError& e : *errors) (void)e.ToString();
  }
  return 0;
}
