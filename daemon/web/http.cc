#include "daemon/web/http.h"

#include <fmt/format.h>
#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <exception>
#include <iterator>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

// civetweb's headers are C-style (old casts, unused parameters); they are
// included only here, never in a header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <CivetServer.h>
#include <civetweb.h>
#pragma GCC diagnostic pop
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include "daemon/common/wall_clock.h"
#include "daemon/web/landing_page.h"
#include "daemon/web/listen_address.h"
#include "daemon/web/listener_hardening.h"
#include "daemon/web/metrics.h"
#include "daemon/web/request_route.h"
#include "daemon/web/tls_options.h"
#include "daemon/web/web_security.h"

namespace numaprobe::daemon {
namespace {

using kernels::Expected;
using kernels::Failure;
using kernels::Outcome;

constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kHtml = "text/html; charset=utf-8";

// Dual-stack ":PORT" needs IPv6 in civetweb (mg_check_feature bit 8; Debian
// 12's build lacks it) and in the kernel (ipv6.disable=1 hosts lack it).
bool Ipv6Usable() {
  constexpr unsigned kFeatureIpv6 = 8;
  if (mg_check_feature(kFeatureIpv6) == 0) return false;
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// civetweb reports why it could not start (bind failures) only through the
// log_message callback, on the thread that runs mg_start. While Start() runs,
// messages go here so the failure can name its cause.
thread_local std::vector<std::string>* startup_messages = nullptr;
int LogMessage(const mg_connection* /*conn*/, const char* message) {
  if (startup_messages != nullptr) {
    startup_messages->emplace_back(message);
  } else {
    spdlog::warn("http: {}", message);
  }
  return 1;  // handled: civetweb writes no log of its own
}

class StartupCapture {
 public:
  explicit StartupCapture(std::vector<std::string>& messages) { startup_messages = &messages; }
  ~StartupCapture() { startup_messages = nullptr; }
  StartupCapture(const StartupCapture&) = delete;
  StartupCapture& operator=(const StartupCapture&) = delete;
};

// One request handler for every path, so routing, 404 and 405 are ours
// rather than civetweb's file-serving fallbacks.
class Civet final : public CivetServer {
 public:
  using CivetServer::CivetServer;
  void RouteAll(mg_request_handler handler, void* data) { mg_set_request_handler(context, "/", handler, data); }
};

struct Response {
  int status = 200;
  const char* content_type = kText;
  std::string body;
  const char* allow = nullptr;  // for 405
  bool challenge = false;       // 401: ask for basic auth
};

// RFC 9110 IMF-fixdate. Ours because civetweb formats its Date header with
// gmtime(), whose static buffer races between worker threads (TSan reports
// it); civetweb adds none when the response already has one.
std::string HttpDate() { return UtcNow("%a, %d %b %Y %H:%M:%S GMT"); }

// Whether civetweb keeps the connection open after this response (the
// Connection header we send must agree): request_route.h.
bool KeepsAlive(const mg_connection* conn, const mg_request_info* info) {
  return ConnectionKeepsAlive(mg_get_header(conn, "Connection"), info->http_version);
}

// The whole response in one write. civetweb's mg_response_header_* API sends
// every header line with a send(2) of its own: with TCP_NODELAY that is seven
// packets and as many client wake-ups per scrape, which under 50 concurrent
// clients cost more than producing the metrics.
void Send(mg_connection* conn, const mg_request_info* info, const Response& r, bool head,
          const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\nDate: {}\r\nConnection: {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                  r.status, mg_get_response_code_text(conn, r.status), HttpDate(),
                  KeepsAlive(conn, info) ? "keep-alive" : "close", r.content_type, r.body.size());
  if (r.allow != nullptr) fmt::format_to(std::back_inserter(out), "Allow: {}\r\n", r.allow);
  if (r.challenge) out += "WWW-Authenticate: Basic realm=\"numaprobe\", charset=\"UTF-8\"\r\n";
  for (const auto& [name, value] : headers) fmt::format_to(std::back_inserter(out), "{}: {}\r\n", name, value);
  out += "\r\n";
  if (!head) out += r.body;
  mg_write(conn, out.data(), out.size());
}

// civetweb's bind error reads "cannot bind to SPEC: 98 (Address already in
// use)"; SPEC is our translation, so map it back to the address as given.
std::string StartFailure(const std::vector<std::string>& addresses, const std::vector<std::string>& specs,
                         const std::vector<std::string>& messages, const std::string& exception) {
  const std::string cause = messages.empty() ? exception : messages.front();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (cause.find(" " + specs[i] + ": ") != std::string::npos) {
      return "cannot listen on " + addresses[i] + ": " + cause;
    }
  }
  std::string all;
  for (const std::string& address : addresses) all += (all.empty() ? "" : ", ") + address;
  return "cannot listen on " + all + ": " + cause;
}

// Where a listener started from civetweb port `spec` can be reached from
// this host: its own address, or loopback for the wildcard.
std::string ReachableHost(const std::string& spec) {
  if (spec.empty() || spec.front() == '+' || spec.find(':') == std::string::npos) return "127.0.0.1";
  if (spec.front() == '[') {
    const std::string host = spec.substr(1, spec.find(']') - 1);
    return host == "::" ? "::1" : host;
  }
  const std::string host = spec.substr(0, spec.rfind(':'));
  return host == "0.0.0.0" ? "127.0.0.1" : host;
}

// One address a listener can be reached at, resolved once at start so
// stopping never waits for a resolver.
struct Listener {
  sockaddr_storage address{};
  socklen_t length = 0;
};

std::vector<Listener> Resolve(const std::string& host, int port) {
  std::vector<Listener> listeners;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &result) != 0) return listeners;
  for (const addrinfo* a = result; a != nullptr; a = a->ai_next) {
    if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    Listener listener;
    std::memcpy(&listener.address, a->ai_addr, a->ai_addrlen);
    listener.length = a->ai_addrlen;
    listeners.push_back(listener);
  }
  freeaddrinfo(result);
  return listeners;
}

// Opens and at once closes a connection: enough to make the listening socket
// readable, and the worker that gets it reads EOF immediately.
void Poke(const Listener& listener) {
  const int fd = socket(listener.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const timeval timeout{0, 100'000};  // bounds connect(): never stall shutdown
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  connect(fd, reinterpret_cast<const sockaddr*>(&listener.address), listener.length);
  close(fd);
}

// civetweb's accept loop polls with a 2 s quantum and checks its stop flag
// only between polls, so a plain mg_stop takes up to 2 s: over the daemon's
// 1 s SIGTERM budget. While the stop runs, poke every listener so the poll
// returns at once. (Poking before the flag is set just costs another round.)
void StopPromptly(std::unique_ptr<Civet>& civet, const std::vector<Listener>& listeners) {
  std::atomic<bool> stopped{false};
  std::thread waker([&] {
    while (!stopped.load()) {
      for (const Listener& listener : listeners) Poke(listener);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  civet.reset();
  stopped = true;
  waker.join();
}

// Why `options` cannot start a server, or "". Checked before civetweb
// starts, so a bad option is named rather than reported as a bind failure.
std::string OptionsProblem(const HttpOptions& options) {
  if (std::string problem = TelemetryPathProblem(options.telemetry_path); !problem.empty()) return problem;
  if (options.listen_addresses.empty()) return "no listen address given";
  if (options.web.tls) {
    // Before civetweb loads OpenSSL (tls_options.h); then the files, so a bad
    // one is named rather than reported as civetweb's "SSL callback returned error".
    std::string error = LoadCivetwebOpenSsl();
    if (error.empty()) error = CheckTls(*options.web.tls);
    return error;
  }
  return "";
}

// The listen addresses in civetweb's terms.
struct CivetPorts {
  std::vector<std::string> specs;  // one per listen address, in order
  std::string listening_ports;     // civetweb's "listening_ports" option
};

Expected<CivetPorts> ToCivetPorts(const HttpOptions& options) {
  const bool ipv6 = Ipv6Usable();
  CivetPorts ports;
  for (const std::string& address : options.listen_addresses) {
    auto spec = ToCivetPort(address, ipv6);
    if (!spec.ok()) return spec.failure();
    // civetweb's "s" suffix: a TLS listener (the same port never serves plain HTTP).
    ports.listening_ports += (ports.listening_ports.empty() ? "" : ",") + spec.value() + (options.web.tls ? "s" : "");
    ports.specs.push_back(std::move(spec).value());
  }
  if (!ipv6) spdlog::debug("http: IPv6 not available; \":PORT\" listens on IPv4 only");
  return ports;
}

// No document_root: nothing but our handler can answer. Keep-alive with
// TCP_NODELAY: a new TCP handshake per scrape halved throughput under 50
// concurrent clients (docs/performance.md). Small request limit
// (preallocated per thread).
//
// Every open connection holds a civetweb worker thread until it is closed
// or times out: a kept-alive one for up to keep_alive_timeout_ms after its
// last response, a new one for up to request_timeout_ms while its request
// has not fully arrived (counted from the connection's first read, so
// trickling bytes does not extend it). Slow clients are ridden out by
// having more workers than them and by not accepting silent connections
// at all (listener_hardening.h); a scraper's request arrives in one packet.
// Residual limit: more than kWorkerThreads slow clients at once delay
// scrapes by up to request_timeout_ms. This is no defence against a
// deliberate attacker: bind --web.listen-address to the scraping interface
// or firewall the port.
std::vector<std::string> CivetOptions(const std::string& listening_ports) {
  // Name, value pairs, as CivetServer takes them.
  return {"listening_ports",       listening_ports, "num_threads",       std::to_string(kWorkerThreads),
          "request_timeout_ms",    "3000",          "enable_keep_alive", "yes",
          "keep_alive_timeout_ms", "2000",          "tcp_nodelay",       "1",
          "max_request_size",      "16384",         "listen_backlog",    std::to_string(kListenBacklog)};
}

}  // namespace

struct HttpServer::Impl {
  Impl(const HttpOptions& options, const ResultStore& result_store)
      : telemetry_path(options.telemetry_path),
        store(result_store),
        metrics(result_store),
        auth(options.web.basic_auth_users),
        headers(options.web.headers) {}

  // civetweb's request handler; returns the status for civetweb's access log.
  static int Handle(mg_connection* conn, void* data) {
    const auto* self = static_cast<const Impl*>(data);
    const mg_request_info* info = mg_get_request_info(conn);
    const std::string_view method = info->request_method != nullptr ? info->request_method : "";
    const std::string_view path = info->local_uri != nullptr ? info->local_uri : "/";
    Response response;
    try {
      if (self->auth.enabled() && !self->auth.Allows(mg_get_header(conn, "Authorization"))) {
        response = Response{401, kText, "Unauthorized\n"};
        response.challenge = true;
      } else {
        response = self->Respond(method, path);
      }
    } catch (const std::exception& e) {  // never let an exception unwind into C
      spdlog::error("http: {} {}: {}", method, path, e.what());
      response = Response{500, kText, "Internal Server Error\n"};
    }
    Send(conn, info, response, method == "HEAD", self->headers);
    return response.status;
  }

  Response Respond(std::string_view method, std::string_view path) const {
    switch (RouteRequest(method, path, telemetry_path)) {
      case Route::kMethodNotAllowed:
        return Response{405, kText, "Method Not Allowed\n", "GET, HEAD"};
      case Route::kMetrics:
        return Response{200, kMetricsType, metrics.Render()};
      case Route::kLanding:
        return Response{200, kHtml, RenderLandingPage(*store.Current(), telemetry_path)};
      case Route::kHealthy:
        return Response{200, kText, "OK"};
      case Route::kReady:
        if (store.Current()->ready()) return Response{200, kText, "Ready"};
        return Response{503, kText, "Not ready: first probe round not complete"};
      case Route::kNotFound:
        break;
    }
    return Response{404, kText, "Not Found\n"};
  }

  // Starts civetweb on `ports`; "" or why it could not, naming the address.
  std::string StartCivet(const HttpOptions& options, const CivetPorts& civet_ports) {
    CivetCallbacks callbacks;
    callbacks.log_message = &LogMessage;
    if (options.web.tls) callbacks.init_ssl = &CivetTlsScope::InitSsl;
    std::vector<std::string> messages;
    const WebConfig::Tls no_tls;
    CivetTlsScope tls(options.web.tls ? *options.web.tls : no_tls);  // what init_ssl applies
    try {
      StartupCapture capture(messages);
      civet = std::make_unique<Civet>(CivetOptions(civet_ports.listening_ports), &callbacks);
    } catch (const CivetException& e) {
      if (!tls.error().empty()) return tls.error();
      return StartFailure(options.listen_addresses, civet_ports.specs, messages, e.what());
    }
    civet->RouteAll(&Impl::Handle, this);
    return "";
  }

  // Once civetweb listens: the real ports (":0" resolved), the listeners'
  // hardening, and the addresses StopPromptly pokes, resolved now so that
  // stopping never waits for a resolver.
  void AfterStart(const std::vector<std::string>& specs) {
    ports = civet->getListeningPorts();
    if (const std::string problem = DeferAccept(ports); !problem.empty()) {
      spdlog::warn("http: silent connections will take worker threads: {}", problem);
    }
    for (std::size_t i = 0; i < specs.size() && i < ports.size(); ++i) {
      for (const Listener& listener : Resolve(ReachableHost(specs[i]), ports[i])) listeners.push_back(listener);
    }
  }

  const std::string telemetry_path;
  const ResultStore& store;
  const MetricsText metrics;
  const BasicAuth auth;
  const std::vector<std::pair<std::string, std::string>> headers;
  std::vector<int> ports;
  std::vector<Listener> listeners;  // where to poke civetweb when stopping
  // Declared last, so destroyed first: civetweb's threads are joined before
  // the members they read go away.
  std::unique_ptr<Civet> civet;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { StopPromptly(impl_->civet, impl_->listeners); }

std::vector<int> HttpServer::ListeningPorts() const { return impl_->ports; }

kernels::Expected<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options, const ResultStore& store) {
  if (std::string problem = OptionsProblem(options); !problem.empty()) {
    return Failure{Outcome::kInvalidSpec, std::move(problem)};
  }
  auto civet_ports = ToCivetPorts(options);
  if (!civet_ports.ok()) return civet_ports.failure();
  auto impl = std::make_unique<Impl>(options, store);
  if (std::string problem = impl->StartCivet(options, civet_ports.value()); !problem.empty()) {
    return Failure{Outcome::kInvalidSpec, std::move(problem)};
  }
  impl->AfterStart(civet_ports->specs);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace numaprobe::daemon
