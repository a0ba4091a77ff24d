// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/http.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <list>
#include <thread>
#include <utility>

#include "daemon/common/memory_return.h"
#include "daemon/common/task_limits.h"
#include "daemon/web/connection_limits.h"
#include "daemon/web/http_reply.h"
#include "daemon/web/http_session.h"
#include "daemon/web/listen_address.h"
#include "daemon/web/log_limiter.h"
#include "daemon/web/request_route.h"
#include "daemon/web/tls_handshake_failures.h"
#include "daemon/web/tls_options.h"
#include "kernels/thread_start.h"

namespace numaprobe::daemon {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using kernels::Expected;
using kernels::Failure;
using kernels::Outcome;

// How often the server looks whether a spike of connections is over, and how
// many connections make one (each holds up to 32 KiB of buffer).
constexpr std::chrono::seconds kTrimInterval{5};
constexpr int kTrimAfterConnections = 256;

// Why `options` cannot start a server, or "". Checked before any socket is
// opened, so a bad option is named rather than reported as a bind failure.
std::string OptionsProblem(const HttpOptions& options) {
  if (std::string problem = TelemetryPathProblem(options.telemetry_path); !problem.empty()) return problem;
  if (options.listen_addresses.empty()) return "no listen address given";
  return "";
}

// A listening socket for `bind`; the failure names `address` as given.
Expected<tcp::acceptor> Listen(asio::io_context& io, const std::string& address, const BindAddress& bind) {
  ErrorCode error;
  const tcp::endpoint endpoint(asio::ip::make_address(bind.ip, error), bind.port);
  if (error) return Failure{Outcome::kInvalidSpec, "cannot listen on " + address + ": " + error.message()};
  tcp::acceptor acceptor(io);
  const auto failed = [&](const char* step) {
    return Failure{Outcome::kInvalidSpec, "cannot listen on " + address + ": " + step + ": " + error.message()};
  };
  acceptor.open(endpoint.protocol(), error);
  if (error) return failed("socket");
  acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (error) return failed("SO_REUSEADDR");
  if (bind.dual_stack) acceptor.set_option(asio::ip::v6_only(false), error);
  if (error) return failed("IPV6_V6ONLY");
  acceptor.bind(endpoint, error);
  if (error) return failed("bind");
  acceptor.listen(kListenBacklog, error);
  if (error) return failed("listen");
  if (const std::string problem = DeferAccept(acceptor.native_handle()); !problem.empty()) {
    spdlog::warn("http: {}: {}", address, problem);
  }
  return acceptor;
}

// The TLS context `web` asks for (its files read now), or null for plain HTTP.
Expected<std::shared_ptr<asio::ssl::context>> TlsContextFor(const WebConfig& web) {
  if (!web.tls) return std::shared_ptr<asio::ssl::context>();
  return MakeTlsContext(*web.tls);
}

}  // namespace

struct HttpServer::Impl {
  Impl(const HttpOptions& options, const ResultStore& result_store, std::shared_ptr<asio::ssl::context> tls)
      : telemetry_path(options.telemetry_path),
        store(result_store),
        current(ServingConfig{std::make_shared<const Site>(telemetry_path, store, options.web, &tls_failures,
                                                           &password_checks),
                              std::move(tls)}),
        max_connections(MaxConnections()) {}

  // Accepts the next connection on `acceptor`, forever (until the loop stops).
  void Accept(tcp::acceptor& acceptor) {
    acceptor.async_accept(asio::make_strand(io), [this, &acceptor](const ErrorCode& error, tcp::socket socket) {
      if (error) {
        AcceptFailed(acceptor, error);
        return;
      }
      ErrorCode ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // one write per response; never wait for an ACK
      try {
        Dispatch(std::move(socket));
      } catch (const std::exception& e) {
        // Out of memory for a session or its SSL object: this connection is
        // dropped (its socket closes), the server goes on.
        spdlog::warn("http: cannot serve a connection: {}", e.what());
      }
      Accept(acceptor);
    });
  }

  // Serves `socket`, or refuses it over the cap on open connections.
  void Dispatch(tcp::socket socket) {
    const int open = connections.count();
    const ServingConfig now = current.Get();
    if (open >= max_connections) {
      if (!refusing.exchange(true)) {
        spdlog::warn("http: {} connections open, the limit (file descriptors): refusing new ones until fewer are",
                     open);
      }
      Refuse(std::move(socket), now.tls != nullptr, *now.site, open);
    } else {
      if (refusing.exchange(false)) spdlog::info("http: accepting connections again ({} open)", open);
      int peak = peak_connections.load();
      while (open + 1 > peak && !peak_connections.compare_exchange_weak(peak, open + 1)) {
      }
      Serve(std::move(socket), current, now, connections.Take(), tls_failures);
    }
  }

  // Out of file descriptors (EMFILE, ENFILE) or another transient failure:
  // try again shortly rather than spin. Stopping (operation_aborted): done.
  void AcceptFailed(tcp::acceptor& acceptor, const ErrorCode& error) {
    if (error == asio::error::operation_aborted || !acceptor.is_open()) return;
    // At most one line a minute: an outage of descriptors retries ten times a second.
    if (accept_warning.Allow()) {
      spdlog::warn("http: accept: {}; retrying every 100 ms (logged at most once a minute)", error.message());
    }
    auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(100));
    timer->async_wait([this, timer, &acceptor](const ErrorCode&) { Accept(acceptor); });
  }

  // Every kTrimInterval: once many connections have come and (mostly) gone,
  // their buffers' memory goes back to the kernel. glibc keeps it otherwise:
  // 2000 clients sending 64 KiB each left the daemon at 49 MB resident for
  // good instead of 12 (docs/security.md, "Memory").
  void WatchMemory() {
    trim_timer.expires_after(kTrimInterval);
    trim_timer.async_wait([this](const ErrorCode& error) {
      if (error) return;
      const int open = connections.count();
      const int peak = peak_connections.load();
      if (peak >= kTrimAfterConnections && open <= peak / 4) {
        peak_connections.store(open);
        ReturnFreedMemory();
      }
      WatchMemory();
    });
  }

  // Starts the threads running the loop: as many of kHttpThreads as the task
  // limit allows, at least one.
  std::string StartThreads() {
    for (int i = 0; i < kHttpThreads; ++i) {
      auto thread = kernels::StartThread("HTTP server", [this] { io.run(); });
      if (!thread.ok()) {
        if (threads.empty()) return thread.failure().reason + " (" + DescribeTaskLimits() + ")";
        spdlog::warn("http: {} ({}); serving with {} of {} threads", thread.failure().reason, DescribeTaskLimits(),
                     threads.size(), kHttpThreads);
        break;
      }
      threads.push_back(std::move(thread).value());
    }
    return "";
  }

  void Stop() {
    // Closing the acceptors and connections, then stopping the loop: pending
    // operations are dropped with the io_context.
    work.reset();
    io.stop();
    for (std::thread& thread : threads) thread.join();
    // Never waits for a bcrypt in progress; drops the connections waiting
    // for one while the io_context they belong to still exists.
    password_checks.Stop();
  }

  const std::string telemetry_path;
  const ResultStore& store;
  TlsHandshakeFailures tls_failures;  // before `current`: its Sites export it
  PasswordChecks password_checks;     // before `current`: its Sites use it
  CurrentConfig current;
  const int max_connections;
  OpenConnections connections;
  std::atomic<bool> refusing{false};
  std::atomic<int> peak_connections{0};  // since the last trim
  LogLimiter accept_warning;
  std::vector<int> ports;
  // Declared after what the handlers use, so destroyed before it: pending
  // handlers (and the sessions they hold) go with the io_context.
  asio::io_context io{kHttpThreads};
  std::list<tcp::acceptor> acceptors;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::steady_timer trim_timer{io};
  std::vector<std::thread> threads;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  impl_->Stop();
  impl_->acceptors.clear();
}

std::vector<int> HttpServer::ListeningPorts() const { return impl_->ports; }

std::string HttpServer::Reconfigure(const WebConfig& web) {
  auto tls = TlsContextFor(web);
  if (!tls.ok()) return tls.failure().reason;
  impl_->current.Set(ServingConfig{std::make_shared<const Site>(impl_->telemetry_path, impl_->store, web,
                                                                &impl_->tls_failures, &impl_->password_checks),
                                   std::move(tls).value()});
  return "";
}

kernels::Expected<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options, const ResultStore& store) {
  if (std::string problem = OptionsProblem(options); !problem.empty()) {
    return Failure{Outcome::kInvalidSpec, std::move(problem)};
  }
  auto tls = TlsContextFor(options.web);
  if (!tls.ok()) return tls.failure();
  auto impl = std::make_unique<Impl>(options, store, std::move(tls).value());
  const bool ipv6 = Ipv6Usable();
  if (!ipv6) spdlog::debug("http: IPv6 not available; \":PORT\" listens on IPv4 only");
  for (const std::string& address : options.listen_addresses) {
    auto bind = ParseListenAddress(address, ipv6);
    if (!bind.ok()) return bind.failure();
    auto acceptor = Listen(impl->io, address, bind.value());
    if (!acceptor.ok()) return acceptor.failure();
    impl->ports.push_back(acceptor.value().local_endpoint().port());
    impl->acceptors.push_back(std::move(acceptor).value());
  }
  for (tcp::acceptor& acceptor : impl->acceptors) impl->Accept(acceptor);
  impl->WatchMemory();
  if (std::string problem = impl->StartThreads(); !problem.empty()) {
    return Failure{Outcome::kThreadLimit, "cannot serve HTTP: " + problem};
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace numaprobe::daemon
