// SPDX-License-Identifier: Apache-2.0
// JSON as numaprobe writes it (the state file, `probe --format json`,
// `topology --format json`): indented by two spaces, and never an exception
// for a string that is not UTF-8. Host facts are made printable when read
// (daemon/common/printable_text.h); this is the backstop for any other
// string from the host (a CPU model name from hwloc), which would otherwise
// make nlohmann's writer throw and end the process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace numaprobe::daemon {

inline std::string JsonText(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace numaprobe::daemon
