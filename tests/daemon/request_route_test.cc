// Unit tests for daemon/web/request_route.cc: the telemetry path check shared
// by --web.telemetry-path and HttpServer::Start.
#include "daemon/web/request_route.h"

#include <gtest/gtest.h>

#include <string>

namespace numaprobe::daemon {
namespace {

TEST(TelemetryPathProblem, RefusesWhatIsNotAPathNamingIt) {
  EXPECT_EQ(TelemetryPathProblem(""), "invalid telemetry path \"\": it must start with /");
  EXPECT_EQ(TelemetryPathProblem("metrics"), "invalid telemetry path \"metrics\": it must start with /");
}

TEST(TelemetryPathProblem, RefusesThePathsOfTheOtherEndpoints) {
  EXPECT_EQ(TelemetryPathProblem("/"), "invalid telemetry path \"/\": / is the landing page");
  EXPECT_EQ(TelemetryPathProblem("/-/healthy"),
            "invalid telemetry path \"/-/healthy\": /-/healthy is the health endpoint");
  EXPECT_EQ(TelemetryPathProblem("/-/ready"),
            "invalid telemetry path \"/-/ready\": /-/ready is the readiness endpoint");
}

TEST(TelemetryPathProblem, AcceptsOtherPathsWhichThenRouteToTheMetrics) {
  // Near misses of the refused paths are ordinary paths (matching is exact).
  for (const std::string path : {"/metrics", "/probe/metrics", "/-/ready/", "/-/Healthy", "//"}) {
    EXPECT_EQ(TelemetryPathProblem(path), "") << path;
    EXPECT_EQ(RouteRequest("GET", path, path), Route::kMetrics) << path;
  }
}

}  // namespace
}  // namespace numaprobe::daemon
