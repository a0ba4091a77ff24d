// SPDX-License-Identifier: Apache-2.0
// What numaprobe answers to one parsed HTTP request, as Boost.Beast messages:
//   <telemetry_path>  Prometheus text format 0.0.4 (MetricsText)
//   /                 landing page (daemon/web/landing_page.h)
//   /-/healthy        200 "OK" while the process serves
//   /-/ready          200 "Ready" once a probe round completed, else 503
// Any other path is 404; methods other than GET and HEAD get 405
// (request_route.h). With basic_auth_users configured, every path answers 401
// (WWW-Authenticate) without valid credentials, and 503 when the password
// could not be checked for want of room in the queue (password_checks.h). Bodies of 1 KiB and more are
// gzipped when the request accepts it (content_encoding.h). HEAD gets the
// GET's headers, Content-Length included, and no body.
//
// Pure of the connection: daemon/web/http_session.h reads the request and
// writes the reply. Reply may run on several threads at once.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <utility>
#include <vector>

#include "daemon/serve/result_store.h"
#include "daemon/web/metrics.h"
#include "daemon/web/password_checks.h"
#include "daemon/web/web_security.h"

namespace numaprobe::daemon {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// What every request is answered from; lives as long as the server.
struct Site {
  // `tls_failures` and `password_checks` (null: not exported, and passwords
  // are checked on the caller's thread) are the server's, outliving every Site.
  Site(std::string path, const ResultStore& result_store, const WebConfig& web,
       const TlsHandshakeFailures* tls_failures = nullptr, PasswordChecks* checks = nullptr)
      : telemetry_path(std::move(path)),
        store(result_store),
        metrics(result_store, tls_failures, checks),
        auth(web.basic_auth_users),
        password_checks(checks),
        headers(web.headers) {}
  const std::string telemetry_path;
  const ResultStore& store;
  const MetricsText metrics;
  const BasicAuth auth;
  PasswordChecks* const password_checks;
  const std::vector<std::pair<std::string, std::string>> headers;  // added to every response
};

// Whether the request's credentials passed (always kAllowed without
// basic_auth_users), failed, or could not be checked (kBusy: 503).
enum class Access { kAllowed, kDenied, kBusy };

HttpResponse Reply(const Site& site, const HttpRequest& request, Access access);

// The answer to a request that could not be read or is not answered (400
// malformed, 413 a body, 431 headers too large, 501 an unknown transfer
// coding, 503 too many connections): a short text body, the configured
// headers, and the connection closed after it.
HttpResponse ErrorReply(const Site& site, unsigned status, std::string body);

}  // namespace numaprobe::daemon
