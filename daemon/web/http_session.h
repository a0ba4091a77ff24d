// SPDX-License-Identifier: Apache-2.0
// One accepted HTTP or HTTPS connection, served on the server's event loop
// (daemon/web/http.h): read a request, answer it (http_reply.h), and again
// while the client keeps the connection alive. No thread waits on a
// connection: a slow or idle client costs a socket and a small buffer.
//
// Every wait has its own deadline, and requests a size limit
// (daemon/web/connection_limits.h): slow clients are dropped rather than
// served forever. Requests past kHeaderLimit bytes get 431, malformed ones
// 400, and those whose framing request_route.h's CheckFraming refuses (a
// body, no or two Host headers, an unknown transfer coding) its 413, 400 or
// 501; the connection is then closed. A body is never read into memory: its
// bytes go with the drain below. A request that needs a password checked
// waits for daemon/web/password_checks.h without holding a thread.
//
// A connection the server closes is drained first: the send side is shut
// down, then what the client still sends is read and dropped, for at most
// kDrainTimeout and kDrainLimit bytes, until the client closes too. Closing a
// socket with unread data makes the kernel send a reset, and a client still
// sending an oversized request (one that writes it all before reading) would
// fail on the reset without ever reading the 413 or 431 (Go's net/http
// closeWriteAndWait does the same for the same reason). A draining connection
// still counts against the cap on open connections.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <mutex>

#include "daemon/web/connection_limits.h"
#include "daemon/web/tls_handshake_failures.h"

namespace boost::asio::ssl {
class context;
}

namespace numaprobe::daemon {

struct Site;

// How many connections are open; each session holds one Slot while it lives.
class OpenConnections {
 public:
  class Slot {
   public:
    explicit Slot(std::atomic<int>& count) : count_(&count) { count_->fetch_add(1); }
    ~Slot() {
      if (count_ != nullptr) count_->fetch_sub(1);
    }
    Slot(Slot&& other) noexcept : count_(other.count_) { other.count_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;

   private:
    std::atomic<int>* count_;
  };
  int count() const { return count_.load(); }
  Slot Take() { return Slot(count_); }

 private:
  std::atomic<int> count_{0};
};

// What connections are served with: the answers' settings and, for HTTPS,
// the TLS context. A web-config reload replaces both at once.
struct ServingConfig {
  std::shared_ptr<const Site> site;
  std::shared_ptr<boost::asio::ssl::context> tls;  // null: plain HTTP
};

// The ServingConfig now in force. Each request is answered under the one
// current when it arrives, so a reload reaches kept-alive connections too (a
// revoked password stops working at once); a request already being answered
// finishes under the one it started with.
class CurrentConfig {
 public:
  explicit CurrentConfig(ServingConfig config) : config_(std::move(config)) {}
  ServingConfig Get() const {
    std::lock_guard lock(mutex_);
    return config_;
  }
  void Set(ServingConfig config) {
    std::lock_guard lock(mutex_);
    config_ = std::move(config);
  }

 private:
  mutable std::mutex mutex_;
  ServingConfig config_;
};

// Serves `socket` under `current` (`now` is its value at accept) until the
// client or a timeout ends it. With TLS, the connection speaks TLS only (a
// handshake first); once the TLS configuration is replaced, the connection
// is closed at its next request and the client reconnects under the new one.
// A failed handshake is recorded in `tls_failures`. `current` and
// `tls_failures` must outlive the session (the server's io_context does).
void Serve(boost::asio::ip::tcp::socket socket, const CurrentConfig& current, const ServingConfig& now,
           OpenConnections::Slot slot, TlsHandshakeFailures& tls_failures);

// Over the cap on open connections: a plain-HTTP client gets a 503 saying so,
// then the connection is closed; a TLS one is closed at once (answering would
// cost the handshake the cap is there to avoid).
void Refuse(boost::asio::ip::tcp::socket socket, bool tls, const Site& site, int open);

}  // namespace numaprobe::daemon
