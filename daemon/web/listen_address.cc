// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace numaprobe::daemon {
namespace {

using kernels::Failure;
using kernels::Outcome;

Failure Refuse(const std::string& address, const std::string& why) {
  const std::string shown = address.empty() ? "\"\"" : address;
  return Failure{Outcome::kInvalidSpec, "cannot listen on " + shown + ": " + why};
}

bool IsPort(const std::string& port) {
  if (port.empty() || port.size() > 5) return false;
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) return false;
  return std::stoi(port) <= 65535;
}

// RFC 1123 host name characters.
bool IsHostName(const std::string& host) {
  return !host.empty() && host.front() != '-' && host.front() != '.' &&
         std::all_of(host.begin(), host.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; });
}

bool IsIpv4(const std::string& host) {
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr addr{};
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

// The host's first IPv4 address, or why there is none.
kernels::Expected<std::string> ResolveIpv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || result == nullptr) {
    if (result != nullptr) freeaddrinfo(result);
    return Failure{Outcome::kInvalidSpec, "cannot resolve host " + host + " to an IPv4 address: " + gai_strerror(rc)};
  }
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(result->ai_addr)->sin_addr, text, sizeof text);
  freeaddrinfo(result);
  return std::string(text);
}

}  // namespace

bool Ipv6Usable() {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

kernels::Expected<BindAddress> ParseListenAddress(const std::string& address, bool ipv6) {
  std::string host;
  std::string port;
  bool bracketed = false;
  if (!address.empty() && address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string::npos || address.compare(close + 1, 1, ":") != 0) {
      return Refuse(address, "expected [IPv6]:PORT");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    bracketed = true;
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos) return Refuse(address, "missing port (expected HOST:PORT, :PORT or [IPv6]:PORT)");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string::npos) return Refuse(address, "IPv6 addresses need brackets: [IPv6]:PORT");
  }
  if (!IsPort(port)) return Refuse(address, "invalid port \"" + port + "\" (expected 0-65535)");
  BindAddress bind{"", static_cast<std::uint16_t>(std::stoi(port)), false};

  if (bracketed) {
    if (!IsIpv6(host)) return Refuse(address, "\"" + host + "\" is not an IPv6 address");
    if (!ipv6) return Refuse(address, "IPv6 is not available on this host");
    bind.ip = host;
    return bind;
  }
  if (host.empty()) {
    bind.ip = ipv6 ? "::" : "0.0.0.0";
    bind.dual_stack = ipv6;
    return bind;
  }
  if (IsIpv4(host)) {
    bind.ip = host;
    return bind;
  }
  if (!IsHostName(host)) return Refuse(address, "invalid host \"" + host + "\"");
  auto resolved = ResolveIpv4(host);
  if (!resolved.ok()) return Refuse(address, resolved.failure().reason);
  bind.ip = std::move(resolved).value();
  return bind;
}

}  // namespace numaprobe::daemon
