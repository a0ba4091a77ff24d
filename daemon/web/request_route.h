// Which endpoint a request asks for, as a pure function of its method and
// path (tests/fuzz/fuzz_http_request.cc reaches it behind Boost.Beast's
// parser). Beast parses the request line and headers; this decides what to
// do with them.
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
// node_exporter. `path` is the request target without its query string.
Route RouteRequest(std::string_view method, std::string_view path, std::string_view telemetry_path);

// Why `telemetry_path` cannot serve the metrics, naming it; "" if it can. It
// must be a path ("/...") and not one RouteRequest gives to another endpoint:
// "/" (the landing page), "/-/healthy", "/-/ready". The one check behind both
// the --web.telemetry-path flag and HttpServer::Start, so they refuse the
// same paths with the same words.
std::string TelemetryPathProblem(std::string_view telemetry_path);

}  // namespace numaprobe::daemon
