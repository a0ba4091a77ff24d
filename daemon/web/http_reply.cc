// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/http_reply.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/field.hpp>
#include <exception>
#include <string_view>

#include "daemon/common/wall_clock.h"
#include "daemon/web/content_encoding.h"
#include "daemon/web/landing_page.h"
#include "daemon/web/request_route.h"

namespace numaprobe::daemon {
namespace {

namespace http = boost::beast::http;

constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kHtml = "text/html; charset=utf-8";
// Smaller bodies ("OK", error texts) are not worth a gzip header and trailer.
constexpr std::size_t kGzipMinimum = 1024;

// A response with the headers every answer carries. RFC 9110 IMF-fixdate.
HttpResponse Base(const Site& site, unsigned status, const char* content_type, std::string body) {
  HttpResponse response(static_cast<http::status>(status), 11);
  response.set(http::field::date, UtcNow("%a, %d %b %Y %H:%M:%S GMT"));
  response.set(http::field::content_type, content_type);
  for (const auto& [name, value] : site.headers) response.set(name, value);
  response.body() = std::move(body);
  return response;
}

HttpResponse Answer(const Site& site, std::string_view method, std::string_view path) {
  switch (RouteRequest(method, path, site.telemetry_path)) {
    case Route::kMethodNotAllowed: {
      HttpResponse response = Base(site, 405, kText, "Method Not Allowed\n");
      response.set(http::field::allow, "GET, HEAD");
      return response;
    }
    case Route::kMetrics:
      return Base(site, 200, kMetricsType, site.metrics.Render());
    case Route::kLanding:
      return Base(site, 200, kHtml, RenderLandingPage(*site.store.Current(), site.telemetry_path));
    case Route::kHealthy:
      return Base(site, 200, kText, "OK");
    case Route::kReady:
      if (site.store.Current()->ready()) return Base(site, 200, kText, "Ready");
      return Base(site, 503, kText, "Not ready: first probe round not complete");
    case Route::kNotFound:
      break;
  }
  return Base(site, 404, kText, "Not Found\n");
}

// Beast 1.74's string_view is Boost's.
std::string_view View(boost::beast::string_view text) { return {text.data(), text.size()}; }

// The path without its query string ("/metrics?x=1" is /metrics).
std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace

HttpResponse Reply(const Site& site, const HttpRequest& request, Access access) {
  const std::string_view method = View(request.method_string());
  const std::string_view path = PathOf(View(request.target()));
  HttpResponse response;
  try {
    if (access == Access::kDenied) {
      response = Base(site, 401, kText, "Unauthorized\n");
      response.set(http::field::www_authenticate, "Basic realm=\"numaprobe\", charset=\"UTF-8\"");
    } else if (access == Access::kBusy) {
      response = Base(site, 503, kText, "Service Unavailable: too many password checks waiting; try again later\n");
      response.set(http::field::retry_after, "1");
    } else {
      response = Answer(site, method, path);
    }
    const bool negotiable = response.body().size() >= kGzipMinimum;
    if (negotiable) response.set(http::field::vary, "Accept-Encoding");
    if (negotiable && AcceptsGzip(View(request[http::field::accept_encoding]))) {
      response.body() = Gzip(response.body());
      response.set(http::field::content_encoding, "gzip");
    }
  } catch (const std::exception& e) {
    spdlog::error("http: {} {}: {}", method, path, e.what());
    response = Base(site, 500, kText, "Internal Server Error\n");
  }
  response.prepare_payload();  // Content-Length of the body a GET gets
  if (request.method() == http::verb::head) response.body().clear();
  response.keep_alive(request.keep_alive());
  // Said explicitly for HTTP/1.1 too, as clients and the tests expect.
  response.set(http::field::connection, request.keep_alive() ? "keep-alive" : "close");
  return response;
}

HttpResponse ErrorReply(const Site& site, unsigned status, std::string body) {
  HttpResponse response = Base(site, status, kText, std::move(body));
  response.prepare_payload();
  response.keep_alive(false);
  response.set(http::field::connection, "close");
  return response;
}

}  // namespace numaprobe::daemon
