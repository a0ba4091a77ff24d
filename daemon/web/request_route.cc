// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/request_route.h"

namespace numaprobe::daemon {

Route RouteRequest(std::string_view method, std::string_view path, std::string_view telemetry_path) {
  if (method != "GET" && method != "HEAD") return Route::kMethodNotAllowed;
  if (path == telemetry_path) return Route::kMetrics;
  if (path == "/") return Route::kLanding;
  if (path == "/-/healthy") return Route::kHealthy;
  if (path == "/-/ready") return Route::kReady;
  return Route::kNotFound;
}

FramingVerdict CheckFraming(unsigned version, std::size_t host_fields, std::string_view transfer_encoding,
                            bool has_body) {
  if (host_fields > 1) return {400, "Bad Request: more than one Host header\n"};
  if (version >= 11 && host_fields == 0) return {400, "Bad Request: an HTTP/1.1 request needs a Host header\n"};
  // Beast only takes "chunked" (as the last coding) for a body; a request
  // naming anything else would have its body read as the next request.
  const auto is_chunked = [](std::string_view coding) {
    constexpr std::string_view kChunked = "chunked";
    if (coding.size() != kChunked.size()) return false;
    for (std::size_t i = 0; i < coding.size(); ++i) {
      if ((coding[i] | 0x20) != kChunked[i]) return false;  // ASCII letters: case-insensitive (RFC 9112 7)
    }
    return true;
  };
  if (!transfer_encoding.empty() && !is_chunked(transfer_encoding)) {
    return {501, "Not Implemented: no transfer coding other than chunked is taken\n"};
  }
  if (has_body || !transfer_encoding.empty()) return {413, "Content Too Large: no endpoint takes a request body\n"};
  return {};
}

std::string TelemetryPathProblem(std::string_view telemetry_path) {
  const auto problem = [&](std::string_view why) {
    return "invalid telemetry path \"" + std::string(telemetry_path) + "\": " + std::string(why);
  };
  if (telemetry_path.empty() || telemetry_path.front() != '/') return problem("it must start with /");
  // Otherwise RouteRequest would answer these with the metrics, and the
  // endpoint that lives there would be gone.
  if (telemetry_path == "/") return problem("/ is the landing page");
  if (telemetry_path == "/-/healthy") return problem("/-/healthy is the health endpoint");
  if (telemetry_path == "/-/ready") return problem("/-/ready is the readiness endpoint");
  return "";
}

}  // namespace numaprobe::daemon
