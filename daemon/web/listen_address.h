// SPDX-License-Identifier: Apache-2.0
// node_exporter-style --web.listen-address values -> the address to bind,
// checked before any socket is opened so a typo is reported naming the
// address:
//
//   ":PORT"       all interfaces: "::" dual stack (IPv4 + IPv6) when IPv6 is
//                 usable, else "0.0.0.0" (IPv4 only)
//   "HOST:PORT"   IPv4 literal, or a host name resolved to its first IPv4 address
//   "[V6]:PORT"   IPv6 literal; refused when IPv6 is not usable
//
// PORT is 0-65535 (0: the kernel picks one; see HttpServer::ListeningPorts).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/result.h"

namespace numaprobe::daemon {

struct BindAddress {
  std::string ip;  // numeric: "127.0.0.1", "::1", "0.0.0.0", "::"
  std::uint16_t port = 0;
  bool dual_stack = false;  // "::" that accepts IPv4 too (":PORT" with IPv6)
  bool operator==(const BindAddress&) const = default;
};

// `ipv6` says whether the host has IPv6 (Ipv6Usable). Failures read
// "cannot listen on ADDRESS: why".
kernels::Expected<BindAddress> ParseListenAddress(const std::string& address, bool ipv6);

// Whether this host can open IPv6 sockets (ipv6.disable=1 hosts cannot).
bool Ipv6Usable();

}  // namespace numaprobe::daemon
