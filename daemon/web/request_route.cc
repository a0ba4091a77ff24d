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
