// SPDX-License-Identifier: Apache-2.0
// What bounds slow, silent or many clients (docs/security.md, "Slow
// clients"). Connections cost no thread (daemon/web/http_session.h), so:
//
//  - deadlines for every wait of a connection:
//      kKeepAliveTimeout: an open connection with no request under way (a
//        fresh one gets kHeaderTimeout, the time a scraper's request takes);
//      kHeaderTimeout: the TLS handshake, and the request line and headers,
//        counted from their first byte, so trickling bytes does not extend it;
//      kWriteTimeout: the response, to a client that stops reading;
//      kDrainTimeout: reading and dropping what a client still sends once the
//        server closes (daemon/web/http_session.h), at most kDrainLimit bytes;
//  - a size limit on the request line and headers: kHeaderLimit (no body is
//    ever read: request_route.h's CheckFraming refuses one);
//  - MaxConnections: the cap on open connections, below the process's file
//    descriptor limit so that accept() never fails for want of one while
//    the daemon still has files to open. Past it, clients get a 503;
//  - DeferAccept: TCP_DEFER_ACCEPT on the listening sockets, so a connection
//    that sends nothing is not accepted (and holds no descriptor) until its
//    first data arrives, or kDeferAcceptSeconds have passed, provided the
//    listen backlog (kListenBacklog) has room for them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace numaprobe::daemon {

inline constexpr std::chrono::milliseconds kHeaderTimeout{3000};
inline constexpr std::chrono::milliseconds kKeepAliveTimeout{2000};
inline constexpr std::chrono::milliseconds kWriteTimeout{10000};
// Long enough for a client's request still in flight to arrive after the
// refusal (Go's net/http waits as long); the byte bound caps the CPU a
// client streaming garbage can make the server spend on one connection.
inline constexpr std::chrono::milliseconds kDrainTimeout{500};
inline constexpr std::uint64_t kDrainLimit = 1024 * 1024;
inline constexpr std::uint32_t kHeaderLimit = 16 * 1024;

inline constexpr int kDeferAcceptSeconds = 30;
// Connections waiting for their first data count against the listen backlog.
// Past it the kernel answers with SYN cookies, which TCP_DEFER_ACCEPT cannot
// hold back. The kernel caps it at net.core.somaxconn (4096 since 5.4).
inline constexpr int kListenBacklog = 4096;
// The cap when the descriptor limit allows more: far more than the slow
// clients the server promises to ride out (500,
// tests/integration/test_http_slowloris.py).
inline constexpr int kMaxConnections = 2048;
// Descriptors kept for everything else: probe buffers' sysfs reads, the
// state file, logs, the listeners.
inline constexpr int kReservedDescriptors = 64;

// min(kMaxConnections, RLIMIT_NOFILE's soft limit - kReservedDescriptors),
// at least 1.
int MaxConnections();

// Sets TCP_DEFER_ACCEPT on the listening socket `fd`. Returns what failed
// ("" if nothing); a failure leaves the server working, only less sheltered
// from idle connections.
std::string DeferAccept(int fd, int seconds = kDeferAcceptSeconds);

}  // namespace numaprobe::daemon
