// SPDX-License-Identifier: Apache-2.0
// numaprobe's HTTP(S) server: Boost.Beast's HTTP/1.1 on Boost.Asio's event
// loop (OpenSSL 3 through asio::ssl for TLS), run by kHttpThreads threads
// whatever the number of clients. What each request gets is
// daemon/web/http_reply.h; how a connection is read, timed out and closed is
// daemon/web/http_session.h. With tls_server_config every listener serves
// HTTPS only (daemon/web/tls_options.h); failed handshakes are counted and
// logged (daemon/web/tls_handshake_failures.h).
//
// Our own server rather than prometheus-cpp's Exposer: the Exposer cannot
// serve other paths (/, /-/healthy, /-/ready) and always adds exposer_*
// scrape metrics of its own.
//
// Requests only read the ResultStore; they never trigger or wait for a probe.
//
// Open connections are capped (MaxConnections: below the file descriptor
// limit); past the cap a client gets a 503 and is closed.
//
// Thread safety: the server's threads serve requests concurrently with the
// scheduler's ResultStore::Update. Start, Reconfigure and the destructor are
// called from one thread; ListeningPorts() is safe from any.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/config/web_config.h"
#include "daemon/serve/result_store.h"
#include "kernels/result.h"

namespace numaprobe::daemon {

// Threads running the event loop. Two, so that one slow request (bcrypt for
// an unknown password costs tens of milliseconds) does not hold every other.
inline constexpr int kHttpThreads = 2;

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
  // 127.0.0.1:10062: Address already in use"), a TLS file it cannot use (the
  // key and the path: its one reading is the check), or the task limit when
  // not even one server thread can be created. `store` must outlive the server.
  static kernels::Expected<std::unique_ptr<HttpServer>> Start(const HttpOptions& options, const ResultStore& store);

  // Stops accepting, closes every connection, joins the server's threads.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound ports, in listen_addresses order (port 0 resolved to the real one).
  std::vector<int> ListeningPorts() const;

  // A reloaded web config (TLS, basic auth, headers) for every request from
  // now on, without closing the listeners or cutting a response in flight;
  // the TLS files are read again, once, even when their names did not change
  // (they may have been replaced in place). On an error, names the problem
  // and keeps the running configuration.
  std::string Reconfigure(const WebConfig& web);

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace numaprobe::daemon
