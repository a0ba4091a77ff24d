// Keeps slow or silent clients from starving scrapes (docs/security.md,
// "Slow clients"). civetweb 1.15 gives every accepted connection a worker
// thread of its own until the request has arrived (or request_timeout_ms
// passes), so two things bound what a slowloris costs:
//
//  - kWorkerThreads: more workers than the slow connections we promise to
//    ride out (500, tests/integration/test_http_slowloris.py), so a scrape
//    always finds a free one. An idle civetweb worker is a parked thread and
//    a 16 KiB request buffer (max_request_size).
//  - DeferAccept: TCP_DEFER_ACCEPT on the listening sockets, so a connection
//    that sends nothing is not accepted (and takes no worker) until its first
//    data arrives, or kDeferAcceptSeconds have passed, provided the listen
//    backlog (kListenBacklog) has room for them.
//
// civetweb stays out of this header.
#pragma once

#include <string>
#include <vector>

namespace numaprobe::daemon {

inline constexpr int kWorkerThreads = 1024;
inline constexpr int kDeferAcceptSeconds = 30;
// Connections waiting for their first data count against the listen backlog
// (civetweb's default: 200). Past it the kernel answers with SYN cookies,
// which TCP_DEFER_ACCEPT cannot hold back: those were accepted at once and
// took workers. The kernel caps it at net.core.somaxconn (4096 since 5.4).
inline constexpr int kListenBacklog = 4096;

// Sets TCP_DEFER_ACCEPT on this process's listening TCP sockets bound to one
// of `ports` (civetweb has no hook for its listening sockets, so they are
// found among our open file descriptors). Returns a description of each
// problem ("" if none); a failure leaves the server working, only less
// sheltered from idle connections.
std::string DeferAccept(const std::vector<int>& ports, int seconds = kDeferAcceptSeconds);

}  // namespace numaprobe::daemon
