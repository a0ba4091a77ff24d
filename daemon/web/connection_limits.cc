// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/connection_limits.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace numaprobe::daemon {

int MaxConnections() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMaxConnections;
  const auto usable = static_cast<long long>(limit.rlim_cur) - kReservedDescriptors;
  return static_cast<int>(std::clamp<long long>(usable, 1, kMaxConnections));
}

std::string DeferAccept(int fd, int seconds) {
  if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds, sizeof seconds) != 0) {
    return std::string("TCP_DEFER_ACCEPT: ") + std::strerror(errno) + "; silent connections will hold descriptors";
  }
  return "";
}

}  // namespace numaprobe::daemon
