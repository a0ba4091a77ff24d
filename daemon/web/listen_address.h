// node_exporter-style --web.listen-address values -> civetweb
// `listening_ports` entries, checked before civetweb sees them so a typo is
// reported naming the address instead of civetweb's generic start failure.
//
//   ":PORT"       all interfaces: "+PORT" (IPv4 + IPv6) when IPv6 is usable,
//                 else "PORT" (IPv4 only; civetweb's plain "PORT" is IPv4)
//   "HOST:PORT"   IPv4 literal or host name: "HOST:PORT"
//   "[V6]:PORT"   IPv6 literal: "[V6]:PORT"; refused when IPv6 is not usable
//
// PORT is 0-65535 (0: the kernel picks one; see HttpServer::ListeningPorts).
#pragma once

#include <string>

#include "kernels/result.h"

namespace numaprobe::daemon {

// `ipv6` says whether civetweb was built with IPv6 and the host has it
// (Debian 12's libcivetweb1 is built without). Failures read
// "cannot listen on ADDRESS: why".
kernels::Expected<std::string> ToCivetPort(const std::string& address, bool ipv6);

}  // namespace numaprobe::daemon
