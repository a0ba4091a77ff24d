// SPDX-License-Identifier: Apache-2.0
// Which endpoint a request asks for, as a pure function of its method and
// path (tests/fuzz/fuzz_http_request.cc reaches it behind Boost.Beast's
// parser). Beast parses the request line and headers; this decides what to
// do with them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace numaprobe::daemon {

enum class Route {
  kMetrics,           // the telemetry path
  kLanding,           // "/"
  kHealthy,           // "/-/healthy"
  kReady,             // "/-/ready"
  kNotFound,          // any other path
  kMethodNotAllowed,  // a method other than GET or HEAD, on any path
};

// Exact, case-sensitive matches: "/metrics/" and "/Metrics" are 404, as in
// node_exporter. `path` is the request target without its query string.
Route RouteRequest(std::string_view method, std::string_view path, std::string_view telemetry_path);

// What a request's framing gets before any endpoint sees it, as a status
// (0: nothing wrong) and its text. RFC 9112: an HTTP/1.1 request needs exactly
// one Host header, any request at most one (400). A Transfer-Encoding other
// than chunked leaves the body's length unknown, and guessing it is how
// request smuggling works: 501, and the connection closed. No endpoint takes
// a body: one announced (Content-Length above 0, or chunked) gets 413 before
// a byte of it is read, and the connection is closed (its bytes drained and
// dropped, never kept).
struct FramingVerdict {
  unsigned status = 0;
  const char* text = "";
};
// `version`: 10 or 11; `host_fields`: how many Host headers; `transfer_encoding`:
// the header's value ("" when absent); `has_body`: Content-Length > 0 or chunked.
FramingVerdict CheckFraming(unsigned version, std::size_t host_fields, std::string_view transfer_encoding,
                            bool has_body);

// Why `telemetry_path` cannot serve the metrics, naming it; "" if it can. It
// must be a path ("/...") and not one RouteRequest gives to another endpoint:
// "/" (the landing page), "/-/healthy", "/-/ready". The one check behind both
// the --web.telemetry-path flag and HttpServer::Start, so they refuse the
// same paths with the same words.
std::string TelemetryPathProblem(std::string_view telemetry_path);

}  // namespace numaprobe::daemon
