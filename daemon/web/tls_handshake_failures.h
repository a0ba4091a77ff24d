// SPDX-License-Identifier: Apache-2.0
// Failed TLS handshakes: counted by reason in
// numaprobe_http_tls_handshake_failures_total and logged with the peer's
// address, as Go's net/http logs "http: TLS handshake error from ADDR: ERR"
// for exporter-toolkit servers. Without them a scraper that cannot connect
// (plain HTTP to an HTTPS port, a refused client certificate, no common
// cipher suite or version) fails with no trace on the server's side.
//
// The reason label is one of a fixed few, so the family's series are known in
// advance and bounded whatever clients send:
//   timeout      no complete handshake within kHeaderTimeout
//   certificate  a client certificate missing, unverified or not allowed, or
//                the client refused ours (an alert naming a certificate)
//   protocol     any other TLS failure: plain HTTP, no common version,
//                cipher suite or curve, a malformed record
//   closed       the client closed or reset the connection mid-handshake
//                (a TCP health check or port scanner, usually)
//   other        anything else (a socket error)
//
// Thread safety: every member may run on any number of threads at once.
#pragma once

#include <array>
#include <atomic>
#include <boost/system/error_code.hpp>
#include <cstdint>
#include <string>

#include <prometheus/metric_family.h>

#include "daemon/web/log_limiter.h"

namespace numaprobe::daemon {

enum class TlsHandshakeFailure { kTimeout, kCertificate, kProtocol, kClosed, kOther };
inline constexpr int kTlsHandshakeFailureReasons = 5;

// The reason label of `failure` ("timeout", "certificate", ...).
const char* ReasonLabel(TlsHandshakeFailure failure);

// Which reason the error of a failed async_handshake is (an OpenSSL error in
// asio's SSL category, Beast's timeout, or a socket error).
TlsHandshakeFailure ClassifyTlsHandshakeError(const boost::system::error_code& error);

class TlsHandshakeFailures {
 public:
  // Counts the failed handshake of `peer` ("ADDRESS:PORT") and logs a warning
  // naming it, at most once a minute per reason.
  void Record(const boost::system::error_code& error, const std::string& peer);

  std::uint64_t Count(TlsHandshakeFailure failure) const;

  // numaprobe_http_tls_handshake_failures_total, every reason present (0 until seen).
  prometheus::MetricFamily Family() const;

 private:
  std::array<std::atomic<std::uint64_t>, kTlsHandshakeFailureReasons> counts_{};
  std::array<LogLimiter, kTlsHandshakeFailureReasons> logged_;
};

}  // namespace numaprobe::daemon
