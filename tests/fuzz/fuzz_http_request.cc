// libFuzzer: our part of HTTP request handling (daemon/web/request_route.h
// and the basic-auth header check), on the request fields civetweb hands us.
// The input is split at newlines into method, path, Connection header, HTTP
// version and Authorization header (a missing field is an absent header).
// civetweb's own parser is not ours to fuzz; tests/integration/
// test_http_oversized.py throws hostile requests at it through the daemon.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/web/request_route.h"
#include "daemon/web/web_security.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numaprobe::daemon;
  std::vector<std::string> fields;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (fields.size() < 4) {
    const std::size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) break;
    fields.emplace_back(rest.substr(0, newline));
    rest.remove_prefix(newline + 1);
  }
  fields.emplace_back(rest);
  const auto field = [&](std::size_t i) -> const std::string* { return i < fields.size() ? &fields[i] : nullptr; };
  const std::string method = fields[0];
  const std::string path = field(1) ? *field(1) : "/";

  const Route route = RouteRequest(method, path, "/metrics");
  const bool get = method == "GET" || method == "HEAD";
  // Only GET and HEAD reach an endpoint, and each endpoint only by its exact path.
  if (!get && route != Route::kMethodNotAllowed) std::abort();
  if (get && route == Route::kMethodNotAllowed) std::abort();
  if (route == Route::kMetrics && path != "/metrics") std::abort();
  if (route == Route::kLanding && path != "/") std::abort();
  if (route == Route::kHealthy && path != "/-/healthy") std::abort();
  if (route == Route::kReady && path != "/-/ready") std::abort();

  const std::string* connection = field(2);
  const std::string* version = field(3);
  const bool keep =
      ConnectionKeepsAlive(connection ? connection->c_str() : nullptr, version ? version->c_str() : nullptr);
  // No Connection header: only HTTP/1.1 keeps alive. With one, only a "keep-alive" option does.
  if (connection == nullptr && keep != (version != nullptr && *version == "1.1")) std::abort();
  if (connection != nullptr && keep && connection->size() < 10) std::abort();

  // "secret", bcrypt cost 4: executions stay fast.
  static const BasicAuth auth(
      std::map<std::string, std::string>{{"alice", "$2y$04$vtz66eFXt7WfQ.xZnb./Oe7KXe2fyup8JrGPdoFOteBnS36QVdY9i"}});
  const std::string* authorization = field(4);
  const bool allowed = auth.Allows(authorization ? authorization->c_str() : nullptr);
  if (allowed && authorization->find("YWxpY2U6c2VjcmV0") == std::string::npos) std::abort();
  return 0;
}
