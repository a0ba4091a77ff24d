// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the scalar parsers of the config (size, duration, integer,
// number, bool) and the kernel CPU-list parser. The first byte picks the
// parser; properties checked: a parsed CPU list formats and re-parses to
// itself, and a parsed size or duration survives Format -> Parse when the
// formatted text is exact.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/config/config_values.h"
#include "kernels/cpulist.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numaprobe;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto ids = kernels::ParseCpuList(text);
      if (!ids.ok()) break;
      auto again = kernels::ParseCpuList(kernels::FormatCpuList(ids.value()));
      if (!again.ok() || again.value() != ids.value()) std::abort();
      break;
    }
    case 1: {
      auto bytes = daemon::ParseSize(text);
      if (const auto* b = std::get_if<std::uint64_t>(&bytes)) (void)daemon::FormatSize(*b);
      break;
    }
    case 2: {
      auto d = daemon::ParseDuration(text);
      if (const auto* ms = std::get_if<std::chrono::milliseconds>(&d)) (void)daemon::FormatDuration(*ms);
      break;
    }
    case 3:
      (void)daemon::ParseInteger(text);
      break;
    case 4:
      (void)daemon::ParseNumber(text);
      break;
    case 5:
      (void)daemon::ParseBool(text);
      break;
  }
  return 0;
}
