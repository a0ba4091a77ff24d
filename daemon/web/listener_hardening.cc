#include "daemon/web/listener_hardening.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace numaprobe::daemon {
namespace {

// The port a listening TCP socket is bound to, or -1 if `fd` is not one.
int ListeningTcpPort(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return -1;
  int listening = 0;
  socklen_t length = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0) return -1;
  sockaddr_storage address{};
  length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  return -1;  // a Unix socket
}

}  // namespace

std::string DeferAccept(const std::vector<int>& ports, int seconds) {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return std::string("cannot list /proc/self/fd: ") + std::strerror(errno);
  std::string problems;
  int found = 0;
  while (const dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    const int fd = std::atoi(entry->d_name);
    if (fd == dirfd(fds)) continue;
    const int port = ListeningTcpPort(fd);
    if (port < 0 || std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
    ++found;
    if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds, sizeof seconds) != 0) {
      problems += "TCP_DEFER_ACCEPT on port " + std::to_string(port) + ": " + std::strerror(errno) + "; ";
    }
  }
  closedir(fds);
  if (found == 0) problems += "no listening socket found for the bound ports; ";
  return problems;
}

}  // namespace numaprobe::daemon
