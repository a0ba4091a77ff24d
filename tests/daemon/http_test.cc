// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/web/http.cc (with http_session.cc and http_reply.cc),
// daemon/web/listen_address.cc and daemon/web/landing_page.cc: a real server on 127.0.0.1:0, fetched with a tiny
// raw-socket HTTP/1.1 client (no curl in unit tests).
#include "daemon/web/http.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/web/connection_limits.h"
#include "daemon/web/landing_page.h"
#include "daemon/web/listen_address.h"
#include "daemon/web/request_route.h"
#include "tests/daemon/metrics_test_util.h"
#include "tests/daemon/record_util.h"

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string head;                            // status line and headers as sent
  std::string body;
  std::string Header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A socket connected to 127.0.0.1:port whose reads give up after 5 s; -1 on failure.
int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One request on a fresh connection; the server closes it after the response.
HttpResponse Fetch(int port, const std::string& path, const std::string& method = "GET") {
  HttpResponse response;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return response;
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return response;
  }
  std::string raw;
  char buffer[8192];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, static_cast<std::size_t>(n));
  close(fd);

  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.compare(0, 9, "HTTP/1.1 ") != 0) return response;
  response.status = std::stoi(raw.substr(9, 3));
  response.head = raw.substr(0, end + 2);
  for (std::size_t line = raw.find("\r\n") + 2; line < end;) {
    const std::size_t next = raw.find("\r\n", line);
    const std::string header = raw.substr(line, next - line);
    const auto colon = header.find(':');
    std::string name = header.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    response.headers[name] = header.substr(header.find_first_not_of(' ', colon + 1));
    line = next + 2;
  }
  response.body = raw.substr(end + 4);
  return response;
}

std::unique_ptr<HttpServer> StartOrDie(const ResultStore& store, HttpOptions options = {}) {
  if (options.listen_addresses == HttpOptions{}.listen_addresses) options.listen_addresses = {"127.0.0.1:0"};
  auto server = HttpServer::Start(options, store);
  EXPECT_TRUE(server.ok()) << (server.ok() ? "" : server.failure().reason);
  return server.ok() ? std::move(server).value() : nullptr;
}

TEST(Http, ServesHealthReadinessMetricsAndErrors) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(server->ListeningPorts().size(), 1u);
  const int port = server->ListeningPorts()[0];
  ASSERT_GT(port, 0);

  const HttpResponse healthy = Fetch(port, "/-/healthy");
  EXPECT_EQ(healthy.status, 200);
  EXPECT_EQ(healthy.body, "OK");

  const HttpResponse not_ready = Fetch(port, "/-/ready");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "Not ready: first probe round not complete");
  store.Update([](Snapshot& s) { s.rounds_completed = 1; });
  const HttpResponse ready = Fetch(port, "/-/ready");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "Ready");

  const HttpResponse metrics = Fetch(port, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(metrics.body, HasSubstr("numaprobe_rounds_completed_total 1\n"));
  EXPECT_THAT(metrics.body, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  // The server's own counters, every reason known in advance.
  EXPECT_THAT(metrics.body, HasSubstr("numaprobe_http_tls_handshake_failures_total{reason=\"protocol\"} 0\n"));
  EXPECT_THAT(metrics.body, Not(HasSubstr("exposer_")));
  EXPECT_EQ(metrics.Header("content-length"), std::to_string(metrics.body.size()));

  // Exactly one Date header (RFC 9110: an origin server with a clock sends one).
  EXPECT_NE(metrics.head.find("\r\nDate: "), std::string::npos) << metrics.head;
  EXPECT_EQ(metrics.head.find("\r\nDate: "), metrics.head.rfind("\r\nDate: ")) << metrics.head;

  const HttpResponse head = Fetch(port, "/metrics", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_GT(std::stoul(head.Header("content-length")), 0u);

  EXPECT_EQ(Fetch(port, "/nope").status, 404);
  EXPECT_EQ(Fetch(port, "/metrics/extra").status, 404);
  const HttpResponse post = Fetch(port, "/metrics", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.Header("allow"), "GET, HEAD");
  EXPECT_EQ(Fetch(port, "/-/healthy", "DELETE").status, 405);
}

// A connection for several requests, reading each response by its Content-Length.
class Connection {
 public:
  explicit Connection(int port) : fd_(ConnectLoopback(port)) {}
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The head (status line and headers) and body of one response; "" on failure.
  // A HEAD response announces the length of the body it does not carry.
  std::pair<std::string, std::string> Exchange(const std::string& request) {
    if (fd_ < 0 || send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0) return {};
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!Receive()) return {};
    }
    std::string head = pending_.substr(0, end + 2);
    const auto at = head.find("Content-Length: ");
    if (at == std::string::npos) return {};
    const std::size_t length = request.rfind("HEAD ", 0) == 0 ? 0 : std::stoul(head.substr(at + 16));
    while (pending_.size() < end + 4 + length) {
      if (!Receive()) return {};
    }
    std::string body = pending_.substr(end + 4, length);
    pending_.erase(0, end + 4 + length);
    return {head, body};
  }
  // Sends `data` without waiting for an answer.
  bool SendOnly(const std::string& data) {
    return fd_ >= 0 && send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // True once the server has closed the connection (and sent nothing more).
  bool ClosedByServer() {
    char byte;
    return recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  bool Receive() {
    char buffer[8192];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }
  int fd_;
  std::string pending_;
};

TEST(Http, KeepAliveFollowsTheRequestAndIsAnnounced) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  {
    // HTTP/1.1 keeps the connection by default: three responses on one socket.
    Connection conn(port);
    for (const char* path : {"/-/healthy", "/metrics", "/nope"}) {
      const auto [head, body] = conn.Exchange(std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
      EXPECT_THAT(head, HasSubstr("\r\nConnection: keep-alive\r\n")) << path;
      EXPECT_FALSE(body.empty()) << path;
    }
    const auto [head, body] = conn.Exchange("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_THAT(head, HasSubstr("HTTP/1.1 200 OK\r\n"));
    EXPECT_THAT(head, Not(HasSubstr("Content-Length: 0\r\n")));  // HEAD: the GET's length, no body
    EXPECT_EQ(body, "");
    // The connection is still in step: the next response is the next request's.
    EXPECT_EQ(conn.Exchange("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n").second, "OK");
  }
  for (const std::string request :
       {"GET /-/healthy HTTP/1.0\r\n\r\n", "GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}) {
    Connection conn(port);
    const auto [head, body] = conn.Exchange(request);
    EXPECT_THAT(head, HasSubstr("\r\nConnection: close\r\n")) << request;
    EXPECT_EQ(body, "OK");
    EXPECT_TRUE(conn.ClosedByServer()) << request;
  }
  {
    Connection conn(port);
    const auto [head, body] = conn.Exchange("GET /-/healthy HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    EXPECT_THAT(head, HasSubstr("\r\nConnection: keep-alive\r\n"));
    const auto [head2, body2] = conn.Exchange("GET /-/ready HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_THAT(head2, HasSubstr("HTTP/1.1 503 Service Unavailable\r\n"));
  }
}

// A reloaded web config reaches a kept-alive connection at its next request
// (a password added or revoked applies at once); a config that cannot be used
// is refused, naming the problem, and the running one stays.
TEST(Http, ReconfigureAppliesToKeptAliveConnectionsAndKeepsTheOldOneOnError) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  Connection conn(port);
  const std::string healthy = "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_THAT(conn.Exchange(healthy).first, HasSubstr("HTTP/1.1 200 OK\r\n"));

  WebConfig with_auth;
  with_auth.headers = {{"X-Reloaded", "yes"}};
  with_auth.basic_auth_users = {{"alice", "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"}};
  ASSERT_EQ(server->Reconfigure(with_auth), "");
  const auto [head, body] = conn.Exchange(healthy);
  EXPECT_THAT(head, HasSubstr("HTTP/1.1 401 Unauthorized\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nX-Reloaded: yes\r\n"));

  WebConfig bad_tls;
  bad_tls.tls = WebConfig::Tls{};
  bad_tls.tls->cert_file = "/nonexistent/numaprobe-test.crt";
  bad_tls.tls->key_file = "/nonexistent/numaprobe-test.key";
  EXPECT_THAT(server->Reconfigure(bad_tls), HasSubstr("tls_server_config.cert_file"));
  EXPECT_THAT(conn.Exchange(healthy).first, HasSubstr("HTTP/1.1 401 Unauthorized\r\n")) << "the old config runs";
  EXPECT_EQ(Fetch(port, "/-/healthy").status, 401);
}

// Open connections cost the server no thread: 64 that send nothing and 64
// that sent half a request line do not delay a scrape (the 500-client version
// of this is tests/integration/test_http_slowloris.py). The bound leaves room
// for a busy machine; before the event loop it was the 3 s request timeout.
TEST(Http, IdleAndHalfSentConnectionsDoNotDelayAScrape) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  std::vector<std::unique_ptr<Connection>> idle;  // closed before the server stops
  for (int i = 0; i < 64; ++i) idle.push_back(std::make_unique<Connection>(port));
  for (int i = 0; i < 64; ++i) {
    idle.push_back(std::make_unique<Connection>(port));
    idle.back()->SendOnly("GET /metr");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse healthy = Fetch(port, "/-/healthy");  // gives up after 5 s
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(healthy.status, 200);
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
  idle.clear();
}

// Prometheus sends "Accept-Encoding: gzip": the metrics come gzipped (and
// say so, and that the answer depends on the header); identity otherwise.
TEST(Http, GzipWhenTheScraperAcceptsIt) {
  ResultStore store;
  store.Update([](Snapshot& s) { s = FixedSnapshot(); });
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  Connection conn(server->ListeningPorts()[0]);
  const auto [plain_head, plain] = conn.Exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(plain_head, Not(HasSubstr("Content-Encoding")));
  EXPECT_THAT(plain_head, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(plain_head, HasSubstr("\r\nVary: Accept-Encoding\r\n"));
  EXPECT_THAT(plain, HasSubstr("numaprobe_build_info"));
  const auto [head, gzipped] = conn.Exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  EXPECT_THAT(head, HasSubstr("\r\nContent-Encoding: gzip\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_EQ(gzipped.substr(0, 2), "\x1f\x8b");
  EXPECT_LT(gzipped.size(), plain.size() / 3);
  // HEAD with gzip: the gzipped length, no body.
  const auto [head_head, none] = conn.Exchange("HEAD /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  EXPECT_THAT(head_head, HasSubstr("\r\nContent-Encoding: gzip\r\n"));
  EXPECT_EQ(none, "");
  const auto [refused_head, identity] =
      conn.Exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0, identity\r\n\r\n");
  EXPECT_THAT(refused_head, Not(HasSubstr("Content-Encoding")));
  EXPECT_THAT(identity, HasSubstr("numaprobe_build_info"));
}

// Deadlines (daemon/web/connection_limits.h): a kept-alive connection idle for
// kKeepAliveTimeout and a request line that never ends within kHeaderTimeout
// are closed by the server.
TEST(Http, ClosesIdleKeptAliveConnectionsAndUnfinishedRequests) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  Connection idle(port);
  EXPECT_EQ(idle.Exchange("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n").second, "OK");
  Connection unfinished(port);
  ASSERT_TRUE(unfinished.SendOnly("GET /metr"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.ClosedByServer());  // the socket's 5 s receive timeout would make this false
  EXPECT_GE(std::chrono::steady_clock::now() - start, kKeepAliveTimeout - std::chrono::milliseconds(100));
  EXPECT_TRUE(unfinished.ClosedByServer());
  EXPECT_GE(std::chrono::steady_clock::now() - start, kHeaderTimeout - std::chrono::milliseconds(100));
}

// Past the cap on open connections (MaxConnections: RLIMIT_NOFILE less the
// descriptors kept for the daemon), a client gets a 503 naming the reason and
// the connection is closed; once others close, new ones are served again.
TEST(Http, RefusesConnectionsPastTheCap) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  constexpr int kCap = 3;
  rlimit lowered = saved;
  lowered.rlim_cur = kReservedDescriptors + kCap;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  ASSERT_EQ(MaxConnections(), kCap);
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);  // the cap was taken at start
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  std::vector<std::unique_ptr<Connection>> open;
  for (int i = 0; i < kCap; ++i) {
    open.push_back(std::make_unique<Connection>(port));
    EXPECT_EQ(open.back()->Exchange("GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n").second, "OK");
  }
  const HttpResponse refused = Fetch(port, "/-/healthy");
  EXPECT_EQ(refused.status, 503);
  EXPECT_THAT(refused.body, HasSubstr("3 connections open, the server's limit"));
  open.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server sees them close
  EXPECT_EQ(Fetch(port, "/-/healthy").status, 200);
}

TEST(Http, LandingPageShowsMatricesAndEscapes) {
  ResultStore store;
  store.Update([](Snapshot& s) {
    s = FixedSnapshot();
    s.host.cpu_model = "<script>alert(1)</script> & co";
  });
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const HttpResponse page = Fetch(server->ListeningPorts()[0], "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_THAT(page.body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"));
  EXPECT_THAT(page.body, Not(HasSubstr("<script>")));
  EXPECT_THAT(page.body, HasSubstr("<td>135.0 / 128.2</td>"));  // latency 0 -> 1, ns: median / minimum
  EXPECT_THAT(page.body, HasSubstr("<td>20.00</td>"));          // read bandwidth 0 -> 0, GB/s
  EXPECT_THAT(page.body, HasSubstr("Memory bandwidth, copy"));
  EXPECT_THAT(page.body, HasSubstr("<a href=\"/metrics\">"));
  EXPECT_THAT(page.body, HasSubstr("<a href=\"/-/ready\">"));
  EXPECT_THAT(page.body, HasSubstr("last scheduled probe"));
}

// The interleave weights beside the peak figures, as `numaprobe probe` prints them.
TEST(Http, LandingPageShowsTheInterleaveWeights) {
  Snapshot s = FixedSnapshot();
  s.runtime_facts.nodes[1].mem_total_bytes = 8589934592ULL;
  s.runtime_facts.weighted_interleave = WeightedInterleave{true, {{0, 1}, {1, 1}}};
  for (const auto& [cpu_node, mem_node] : {std::pair{0, 0}, {0, 1}, {1, 1}}) {
    for (const kernels::BandwidthOp op : {kernels::BandwidthOp::kRead, kernels::BandwidthOp::kWrite}) {
      s.figures.push_back({MakePeakFigure(cpu_node, mem_node, op, cpu_node == mem_node ? 8e10 : 4e10), 1700000400});
    }
  }
  const std::string page = RenderLandingPage(s, "/metrics");
  EXPECT_THAT(page, HasSubstr("Interleave weights (MPOL_WEIGHTED_INTERLEAVE"));
  EXPECT_THAT(page, HasSubstr("node 0 measured"));
  EXPECT_THAT(page, HasSubstr("<tr><th>node 0 measured</th><td>21</td><td>10</td><td>1.00</td></tr>"));
  EXPECT_THAT(page, HasSubstr("<tr><th>node 0 kernel (auto)</th><td>1</td><td>1</td><td>0.68</td></tr>"));
}

TEST(Http, CustomTelemetryPathAndSeveralAddresses) {
  ResultStore store;
  HttpOptions options;
  options.listen_addresses = {"127.0.0.1:0", "localhost:0"};
  options.telemetry_path = "/probe/metrics";
  auto server = StartOrDie(store, options);
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(server->ListeningPorts().size(), 2u);
  for (int port : server->ListeningPorts()) {
    EXPECT_EQ(Fetch(port, "/probe/metrics").status, 200);
    EXPECT_EQ(Fetch(port, "/metrics").status, 404);
    EXPECT_THAT(Fetch(port, "/").body, HasSubstr("<a href=\"/probe/metrics\">"));
  }
}

TEST(Http, RejectsBadAddressesNamingThem) {
  ResultStore store;
  for (const std::string address : {"10062", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:http", ":-1", "", "::1:10062",
                                    "[::1", "[::1]10062", "[not-v6]:80", "bad host!:80", "[::1]:99999"}) {
    HttpOptions options;
    options.listen_addresses = {"127.0.0.1:0", address};
    auto server = HttpServer::Start(options, store);
    ASSERT_FALSE(server.ok()) << address;
    const std::string shown = address.empty() ? "\"\"" : address;
    EXPECT_THAT(server.failure().reason, HasSubstr("cannot listen on " + shown + ": ")) << address;
  }
  // The same words as the --web.telemetry-path flag (request_route_test.cc).
  for (const std::string path : {"", "metrics", "/", "/-/healthy", "/-/ready"}) {
    HttpOptions options;
    options.listen_addresses = {"127.0.0.1:0"};
    options.telemetry_path = path;
    auto server = HttpServer::Start(options, store);
    ASSERT_FALSE(server.ok()) << path;
    EXPECT_EQ(server.failure().reason, TelemetryPathProblem(path));
    EXPECT_THAT(server.failure().reason, HasSubstr("invalid telemetry path \"" + path + "\""));
  }
}

TEST(Http, ParsesListenAddressesIntoWhatToBind) {
  using B = BindAddress;
  EXPECT_EQ(ParseListenAddress(":10062", true).value(), (B{"::", 10062, true}));         // dual stack
  EXPECT_EQ(ParseListenAddress(":10062", false).value(), (B{"0.0.0.0", 10062, false}));  // IPv4 only
  EXPECT_EQ(ParseListenAddress("127.0.0.1:0", false).value(), (B{"127.0.0.1", 0, false}));
  EXPECT_EQ(ParseListenAddress("0.0.0.0:65535", true).value(), (B{"0.0.0.0", 65535, false}));
  EXPECT_EQ(ParseListenAddress("localhost:10062", false).value(), (B{"127.0.0.1", 10062, false}));
  EXPECT_EQ(ParseListenAddress("[::1]:10062", true).value(), (B{"::1", 10062, false}));
  const auto no_ipv6 = ParseListenAddress("[::1]:10062", false);
  ASSERT_FALSE(no_ipv6.ok());
  EXPECT_THAT(no_ipv6.failure().reason, HasSubstr("cannot listen on [::1]:10062: IPv6 is not available"));
}

TEST(Http, SecondServerOnTheSamePortFailsNamingTheAddress) {
  ResultStore store;
  auto first = StartOrDie(store);
  ASSERT_NE(first, nullptr);
  const std::string address = "127.0.0.1:" + std::to_string(first->ListeningPorts()[0]);
  HttpOptions options;
  options.listen_addresses = {"127.0.0.1:0", address};
  auto second = HttpServer::Start(options, store);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.failure().reason, HasSubstr("cannot listen on " + address + ": "));
  EXPECT_THAT(second.failure().reason, HasSubstr("in use"));
  EXPECT_EQ(Fetch(first->ListeningPorts()[0], "/-/healthy").status, 200);  // the first one is unaffected
}

// The daemon must exit within 1 s of SIGTERM: stopping the server may not
// wait for clients.
TEST(Http, StopsPromptlyOnTheWildcardAddress) {
  ResultStore store;
  HttpOptions options;
  options.listen_addresses = {":0"};
  auto server = StartOrDie(store, options);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Fetch(server->ListeningPorts()[0], "/-/healthy").status, 200);  // reachable via loopback
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

// Scrapes on the server's threads while the "scheduler" publishes snapshots:
// meant for the tsan preset, which must stay silent.
TEST(Http, ConcurrentScrapesWhileTheStoreUpdates) {
  ResultStore store;
  auto server = StartOrDie(store);
  ASSERT_NE(server, nullptr);
  const int port = server->ListeningPorts()[0];
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t round = 1; !done.load(); ++round) {
      store.Update([round](Snapshot& s) {
        s = FixedSnapshot();
        s.rounds_completed = round;
      });
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> readers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&, i] {
      for (int j = 0; j < 10; ++j) {
        ok += Fetch(port, i % 2 == 0 ? "/metrics" : "/").status == 200 ? 1 : 0;
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  done = true;
  writer.join();
  EXPECT_EQ(ok.load(), 40);
}

}  // namespace
}  // namespace numaprobe::daemon
