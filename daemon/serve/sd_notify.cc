// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace numaprobe::daemon {

bool SdNotify(std::string_view message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return true;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(path);
  if (len >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  const ssize_t sent =
      sendto(fd, message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr), addr_len);
  close(fd);
  return sent == static_cast<ssize_t>(message.size());
}

std::optional<std::chrono::milliseconds> SdWatchdogInterval() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (usec == nullptr) return std::nullopt;
  // WATCHDOG_PID, when set, names the process the watchdog is meant for.
  const char* pid = std::getenv("WATCHDOG_PID");
  if (pid != nullptr && std::strtol(pid, nullptr, 10) != getpid()) return std::nullopt;
  const long long value = std::strtoll(usec, nullptr, 10);
  if (value <= 0) return std::nullopt;
  return std::chrono::milliseconds(value / 2000);
}

}  // namespace numaprobe::daemon
