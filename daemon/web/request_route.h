// Our part of request handling, as pure functions of the request's text so
// tests/fuzz/fuzz_http_request.cc can reach it without civetweb: which
// endpoint a method and path ask for, and whether the Connection header keeps
// the connection alive. civetweb parses the request line and headers; these
// decide what to do with them.
#pragma once

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
// node_exporter. `path` is civetweb's local_uri (query string removed).
Route RouteRequest(std::string_view method, std::string_view path, std::string_view telemetry_path);

// Why `telemetry_path` cannot serve the metrics, naming it; "" if it can. It
// must be a path ("/...") and not one RouteRequest gives to another endpoint:
// "/" (the landing page), "/-/healthy", "/-/ready". The one check behind both
// the --web.telemetry-path flag and HttpServer::Start, so they refuse the
// same paths with the same words.
std::string TelemetryPathProblem(std::string_view telemetry_path);

// civetweb's should_keep_alive() rule for a request with keep-alive enabled:
// an explicit Connection header keeps alive iff one of its comma-separated
// options is "keep-alive" (any case); without one, HTTP/1.1 does and older
// versions do not. Either pointer may be null (header absent, version unknown).
bool ConnectionKeepsAlive(const char* connection_header, const char* http_version);

}  // namespace numaprobe::daemon
