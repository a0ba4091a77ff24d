// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/web/request_route.cc: the telemetry path check shared
// by --web.telemetry-path and HttpServer::Start, and the framing checks.
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

// RFC 9112: exactly one Host for HTTP/1.1 (at most one for 1.0), no transfer
// coding but chunked, and no body at all for numaprobe's endpoints.
TEST(CheckFraming, RefusesWhatRfc9112AndTheEndpointsDoNotTake) {
  EXPECT_EQ(CheckFraming(11, 1, "", false).status, 0u);
  EXPECT_EQ(CheckFraming(10, 0, "", false).status, 0u);  // HTTP/1.0 has no Host requirement
  EXPECT_EQ(CheckFraming(11, 0, "", false).status, 400u);
  EXPECT_STREQ(CheckFraming(11, 0, "", false).text, "Bad Request: an HTTP/1.1 request needs a Host header\n");
  EXPECT_EQ(CheckFraming(11, 2, "", false).status, 400u);
  EXPECT_EQ(CheckFraming(10, 2, "", false).status, 400u);
  EXPECT_EQ(CheckFraming(11, 1, "xchunked", false).status, 501u);
  EXPECT_EQ(CheckFraming(11, 1, "gzip, chunked", true).status, 501u);
  EXPECT_EQ(CheckFraming(11, 1, "chunked, chunked", true).status, 501u);
  EXPECT_EQ(CheckFraming(11, 1, "chunked", true).status, 413u);
  EXPECT_EQ(CheckFraming(11, 1, "Chunked", true).status, 413u);  // coding names are case-insensitive
  EXPECT_EQ(CheckFraming(11, 1, "", true).status, 413u);
}

}  // namespace
}  // namespace numaprobe::daemon
