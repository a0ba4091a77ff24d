// numaprobe's HTTP server (civetweb via its C++ API), serving
//   <telemetry_path>  Prometheus text format 0.0.4 (MetricsText)
//   /                 landing page (daemon/landing_page.h)
//   /-/healthy        200 "OK" while the process serves
//   /-/ready          200 "Ready" once a probe round completed, else 503
// Any other path is 404; methods other than GET and HEAD get 405. With
// basic_auth_users configured, every path answers 401 (WWW-Authenticate)
// without valid credentials. With tls_server_config every listener serves
// HTTPS only (daemon/web/tls_options.h).
//
// Our own server rather than prometheus-cpp's Exposer: the Exposer cannot
// serve other paths (/, /-/healthy, /-/ready) and always adds exposer_*
// scrape metrics of its own. civetweb stays out of this header.
//
// Requests only read the ResultStore; they never trigger or wait for a probe.
//
// Thread safety: civetweb's worker threads (kWorkerThreads in
// listener_hardening.h; one per open connection, freed by the timeouts set in
// http.cc) serve requests concurrently with the scheduler's
// ResultStore::Update. Start and the destructor are called from
// one thread; ListeningPorts() is safe from any.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/config/web_config.h"
#include "daemon/serve/result_store.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

struct HttpOptions {
  // node_exporter-style: ":PORT", "HOST:PORT", "[IPv6]:PORT" (daemon/listen_address.h).
  std::vector<std::string> listen_addresses{":10062"};
  std::string telemetry_path = "/metrics";
  // --web.config.file: TLS, basic auth, extra headers (tls_options.h, web_security.h).
  WebConfig web;
};

class HttpServer {
 public:
  // Listens on every address or fails, naming the address ("cannot listen on
  // 127.0.0.1:10062: ... Address already in use"). `store` must outlive the
  // server.
  static kernels::Expected<std::unique_ptr<HttpServer>> Start(const HttpOptions& options, const ResultStore& store);

  // Stops accepting, waits for requests in flight, joins civetweb's threads.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound ports, in listen_addresses order (port 0 resolved to the real one).
  std::vector<int> ListeningPorts() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace numaprobe::daemon
