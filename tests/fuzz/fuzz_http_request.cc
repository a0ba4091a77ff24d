// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the request path as the server runs it (daemon/web/http_session.cc
// and http_reply.cc): raw bytes through Boost.Beast's request parser with the
// server's header and body limits, then our routing (daemon/web/request_route.h)
// and the basic-auth header check (daemon/web/web_security.h) on what it
// parsed. The endpoints' bodies need a running daemon; tests/integration/
// test_http_oversized.py throws hostile requests at the whole server.
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "daemon/web/request_route.h"
#include "daemon/web/web_security.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numaprobe::daemon;
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.header_limit(16 * 1024);  // connection_limits.h's kHeaderLimit
  parser.body_limit(0);            // no endpoint takes a body (http_session.cc)
  boost::beast::error_code error;
  parser.put(boost::asio::buffer(data, size), error);
  if (error == http::error::need_more) parser.put_eof(error);
  if (error || !parser.is_header_done()) return 0;
  const auto& request = parser.get();

  const std::string method(request.method_string());
  const std::string_view target(request.target().data(), request.target().size());
  const std::string path(target.substr(0, target.find('?')));
  const Route route = RouteRequest(method, path, "/metrics");
  const bool get = method == "GET" || method == "HEAD";
  // Only GET and HEAD reach an endpoint, and each endpoint only by its exact path.
  if (!get && route != Route::kMethodNotAllowed) std::abort();
  if (get && route == Route::kMethodNotAllowed) std::abort();
  if (route == Route::kMetrics && path != "/metrics") std::abort();
  if (route == Route::kLanding && path != "/") std::abort();
  if (route == Route::kHealthy && path != "/-/healthy") std::abort();
  if (route == Route::kReady && path != "/-/ready") std::abort();

  // "secret", bcrypt cost 4: executions stay fast.
  static const BasicAuth auth(
      std::map<std::string, std::string>{{"alice", "$2y$04$vtz66eFXt7WfQ.xZnb./Oe7KXe2fyup8JrGPdoFOteBnS36QVdY9i"}});
  const std::string_view authorization(request[http::field::authorization].data(),
                                       request[http::field::authorization].size());
  if (auth.Allows(authorization) && authorization.find("YWxpY2U6c2VjcmV0") == std::string_view::npos) std::abort();
  return 0;
}
