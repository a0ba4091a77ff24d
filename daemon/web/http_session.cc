// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/http_session.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <optional>
#include <string>
#include <utility>

#include "daemon/web/http_reply.h"
#include "daemon/web/request_route.h"

namespace numaprobe::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using ErrorCode = beast::error_code;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The status and text for a request that could not be read, or 0: nothing to
// answer (the client left, timed out, or spoke no HTTP worth a reply).
std::pair<unsigned, const char*> ReadFailure(const ErrorCode& error) {
  if (error == http::error::header_limit) return {431, "Request Header Fields Too Large\n"};
  if (error == http::error::body_limit) return {413, "Content Too Large: no endpoint takes a request body\n"};
  if (error.category() == http::make_error_code(http::error::bad_target).category() &&
      error != http::error::end_of_stream && error != http::error::partial_message) {
    return {400, "Bad Request\n"};
  }
  return {0, nullptr};
}

template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, const CurrentConfig& current, std::shared_ptr<asio::ssl::context> tls,
          OpenConnections::Slot slot, TlsHandshakeFailures& tls_failures)
      : stream_(std::move(stream)),
        current_(current),
        slot_(std::move(slot)),
        tls_(std::move(tls)),
        tls_failures_(tls_failures) {}

  void Start() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // Taken now: a handshake that times out has its socket closed by then.
      ErrorCode ignored;
      peer_ = beast::get_lowest_layer(stream_).socket().remote_endpoint(ignored);
      beast::get_lowest_layer(stream_).expires_after(kHeaderTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](const ErrorCode& error) {
                                if (error) {
                                  self->tls_failures_.Record(error, self->Peer());
                                  return;
                                }
                                self->AwaitRequest(kHeaderTimeout);
                              });
    } else {
      AwaitRequest(kHeaderTimeout);
    }
  }

 private:
  // Waits up to `idle` for the first byte of the next request (unless a
  // pipelined one is already buffered), then reads its header.
  void AwaitRequest(std::chrono::milliseconds idle) {
    if (buffer_.size() > 0) {
      ReadHeader();
      return;
    }
    beast::get_lowest_layer(stream_).expires_after(idle);
    stream_.async_read_some(buffer_.prepare(kHeaderLimit),
                            [self = this->shared_from_this()](const ErrorCode& error, std::size_t bytes) {
                              self->buffer_.commit(bytes);
                              if (!error) self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    // No endpoint takes a body: a Content-Length above 0 fails the header
    // read (413) before any of the body is read or kept.
    parser_->body_limit(0);
    beast::get_lowest_layer(stream_).expires_after(kHeaderTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](const ErrorCode& error, std::size_t) {
                              self->OnHeader(error);
                            });
  }

  void OnHeader(const ErrorCode& error) {
    if (error) {
      Fail(error);
      return;
    }
    const HttpRequest& request = parser_->get();
    std::string transfer_encoding;
    const auto [first, last] = request.equal_range(http::field::transfer_encoding);
    for (auto field = first; field != last; ++field) {
      if (!transfer_encoding.empty()) transfer_encoding += ", ";
      transfer_encoding.append(field->value().data(), field->value().size());
    }
    const FramingVerdict verdict =
        CheckFraming(request.version(), request.count(http::field::host), transfer_encoding, !parser_->is_done());
    if (verdict.status != 0) {
      Send(ErrorReply(*current_.Get().site, verdict.status, verdict.text));
      return;
    }
    Answer();
  }

  void Fail(const ErrorCode& error) {
    const auto [status, text] = ReadFailure(error);
    if (status != 0) Send(ErrorReply(*current_.Get().site, status, text));
  }

  void Answer() {
    const ServingConfig now = current_.Get();
    // The connection was set up under a TLS configuration (or plain HTTP)
    // that a reload has replaced: answering would serve the new settings
    // over the old channel. Closing unanswered lets the client retry on a
    // new connection (HTTP clients do for an idempotent GET on a reused one).
    if (now.tls != tls_) {
      Close();
      return;
    }
    const Site& site = *now.site;
    if (!site.auth.enabled()) {
      Send(Reply(site, parser_->get(), Access::kAllowed));
      return;
    }
    PasswordCheck check;
    const std::string_view authorization(parser_->get()[http::field::authorization].data(),
                                         parser_->get()[http::field::authorization].size());
    switch (site.auth.Screen(authorization, check)) {
      case BasicAuth::Screening::kAllowed:
        Send(Reply(site, parser_->get(), Access::kAllowed));
        return;
      case BasicAuth::Screening::kDenied:
        Send(Reply(site, parser_->get(), Access::kDenied));
        return;
      case BasicAuth::Screening::kNeedsCheck:
        break;
    }
    if (site.password_checks == nullptr) {
      Send(Reply(site, parser_->get(), check.Run() ? Access::kAllowed : Access::kDenied));
      return;
    }
    // bcrypt runs on the password-checking thread; the answer comes back to
    // this connection's strand. Nothing else of this connection happens
    // meanwhile (no read is pending), so the parser's request stays as it is.
    const bool queued = site.password_checks->Submit(std::move(check), [self = this->shared_from_this(),
                                                                        site = now.site](bool allowed) {
      asio::post(self->stream_.get_executor(), [self, site, allowed] {
        self->Send(Reply(*site, self->parser_->get(), allowed ? Access::kAllowed : Access::kDenied));
      });
    });
    if (!queued) Send(Reply(site, parser_->get(), Access::kBusy));
  }

  void Send(HttpResponse response) {
    response_ = std::move(response);
    beast::get_lowest_layer(stream_).expires_after(kWriteTimeout);
    http::async_write(stream_, *response_, [self = this->shared_from_this()](const ErrorCode& error, std::size_t) {
      self->OnWritten(error);
    });
  }

  void OnWritten(const ErrorCode& error) {
    if (error) return;
    if (response_->keep_alive()) {
      response_.reset();
      AwaitRequest(kKeepAliveTimeout);
      return;
    }
    Close();
  }

  // After a response that closes the connection: the client sees the end of
  // the stream (TLS: close_notify first, bounded by a short deadline), then
  // the connection is drained (http_session.h).
  void Close() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(1));
      stream_.async_shutdown([self = this->shared_from_this()](const ErrorCode&) { self->ShutdownSendAndDrain(); });
    } else {
      ShutdownSendAndDrain();
    }
  }

  void ShutdownSendAndDrain() {
    auto& connection = beast::get_lowest_layer(stream_);
    ErrorCode ignored;
    connection.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    // One deadline for the whole drain: a client trickling bytes cannot extend it.
    connection.expires_after(kDrainTimeout);
    buffer_.clear();
    Drain(0);
  }

  // Reads and drops raw bytes (past TLS: the session is over) until the
  // client closes, the deadline, or kDrainLimit; the socket closes with the
  // session.
  void Drain(std::uint64_t drained) {
    if (drained >= kDrainLimit) return;
    beast::get_lowest_layer(stream_).async_read_some(buffer_.prepare(kHeaderLimit),
                                                     [self = this->shared_from_this(), drained](const ErrorCode& error,
                                                                                                std::size_t bytes) {
                                                       if (!error) self->Drain(drained + bytes);
                                                     });
  }

  // The client's "ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6), for the log.
  std::string Peer() const {
    const std::string address = peer_.address().to_string();
    const std::string port = std::to_string(peer_.port());
    return peer_.address().is_v6() ? "[" + address + "]:" + port : address + ":" + port;
  }

  Stream stream_;
  const CurrentConfig& current_;
  OpenConnections::Slot slot_;
  // The context the connection was accepted under (null: plain HTTP); also
  // keeps alive what the stream's SSL object refers to.
  std::shared_ptr<asio::ssl::context> tls_;
  TlsHandshakeFailures& tls_failures_;
  asio::ip::tcp::endpoint peer_;  // TLS only, for a failed handshake's log line
  // Room for a whole header: a larger one fails on header_limit (431) first.
  beast::flat_buffer buffer_{2 * kHeaderLimit};
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<HttpResponse> response_;  // lives until written
};

// A 503 on a plain connection over the cap; the session is ours so that a
// client that does not read cannot hold the socket past kWriteTimeout.
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(asio::ip::tcp::socket socket, HttpResponse response)
      : stream_(std::move(socket)), response_(std::move(response)) {}
  void Start() {
    stream_.expires_after(std::chrono::seconds(1));
    http::async_write(stream_, response_, [self = shared_from_this()](const ErrorCode&, std::size_t) {
      ErrorCode ignored;
      self->stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    });
  }

 private:
  PlainStream stream_;
  HttpResponse response_;
};

}  // namespace

void Serve(asio::ip::tcp::socket socket, const CurrentConfig& current, const ServingConfig& now,
           OpenConnections::Slot slot, TlsHandshakeFailures& tls_failures) {
  if (now.tls != nullptr) {
    std::make_shared<Session<TlsStream>>(TlsStream(PlainStream(std::move(socket)), *now.tls), current, now.tls,
                                         std::move(slot), tls_failures)
        ->Start();
  } else {
    std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), current, nullptr, std::move(slot),
                                           tls_failures)
        ->Start();
  }
}

void Refuse(asio::ip::tcp::socket socket, bool tls, const Site& site, int open) {
  if (tls) return;  // closed by the socket's destructor
  std::make_shared<Refusal>(std::move(socket),
                            ErrorReply(site, 503,
                                       "Service Unavailable: " + std::to_string(open) +
                                           " connections open, the server's limit; try again later\n"))
      ->Start();
}

}  // namespace numaprobe::daemon
