// SPDX-License-Identifier: Apache-2.0
// Wall-clock time as the daemon shows it: Unix seconds for metrics, and the
// current UTC time in a strftime format for state files and HTTP headers
// (gmtime_r: gmtime's static buffer races between threads).
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace numaprobe::daemon {

inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// `unix_seconds` in UTC, in a strftime format.
inline std::string UtcTime(double unix_seconds, const char* strftime_format) {
  const auto when = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&when, &utc);
  char buffer[64];
  return std::string(buffer, std::strftime(buffer, sizeof buffer, strftime_format, &utc));
}

inline std::string UtcNow(const char* strftime_format) {
  return UtcTime(static_cast<double>(std::time(nullptr)), strftime_format);
}

}  // namespace numaprobe::daemon
