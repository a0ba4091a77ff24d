// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/tls_handshake_failures.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>

#include "daemon/web/family_builder.h"

namespace numaprobe::daemon {
namespace {

namespace asio = boost::asio;

std::size_t Index(TlsHandshakeFailure failure) { return static_cast<std::size_t>(failure); }

// OpenSSL's reasons that are about a certificate: ours refused by the client
// (its alert), or the client's missing, unverified or outside client_allowed_sans.
bool IsCertificateReason(int reason) {
  switch (reason) {
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
    case SSL_R_NO_CERTIFICATES_RETURNED:
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* ReasonLabel(TlsHandshakeFailure failure) {
  // In the enum's order.
  static constexpr const char* kLabels[kTlsHandshakeFailureReasons] = {"timeout", "certificate", "protocol", "closed",
                                                                       "other"};
  return kLabels[Index(failure)];
}

TlsHandshakeFailure ClassifyTlsHandshakeError(const boost::system::error_code& error) {
  if (error == boost::beast::error::timeout) return TlsHandshakeFailure::kTimeout;
  if (error.category() == asio::error::get_ssl_category()) {
    // asio keeps OpenSSL's packed error code (library and reason) as the value.
    const int reason = ERR_GET_REASON(static_cast<unsigned long>(static_cast<unsigned int>(error.value())));
    if (IsCertificateReason(reason)) return TlsHandshakeFailure::kCertificate;
    if (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) return TlsHandshakeFailure::kClosed;
    return TlsHandshakeFailure::kProtocol;
  }
  if (error == asio::ssl::error::stream_truncated || error == asio::error::eof ||
      error == asio::error::connection_reset) {
    return TlsHandshakeFailure::kClosed;
  }
  return TlsHandshakeFailure::kOther;
}

void TlsHandshakeFailures::Record(const boost::system::error_code& error, const std::string& peer) {
  const TlsHandshakeFailure failure = ClassifyTlsHandshakeError(error);
  counts_[Index(failure)].fetch_add(1, std::memory_order_relaxed);
  if (logged_[Index(failure)].Allow()) {
    spdlog::warn(
        "http: TLS handshake error from {}: {} (reason {}; logged at most once a minute per reason, all counted in "
        "numaprobe_http_tls_handshake_failures_total)",
        peer, error.message(), ReasonLabel(failure));
  }
}

std::uint64_t TlsHandshakeFailures::Count(TlsHandshakeFailure failure) const {
  return counts_[Index(failure)].load(std::memory_order_relaxed);
}

prometheus::MetricFamily TlsHandshakeFailures::Family() const {
  FamilyBuilder family("numaprobe_http_tls_handshake_failures_total",
                       "TLS handshakes that failed on the HTTPS listeners since start, by reason (timeout, "
                       "certificate, protocol, closed, other). Counted at the scrape, not the last probe.",
                       prometheus::MetricType::Counter);
  for (int i = 0; i < kTlsHandshakeFailureReasons; ++i) {
    const auto failure = static_cast<TlsHandshakeFailure>(i);
    family.Add({{"reason", ReasonLabel(failure)}}, static_cast<double>(Count(failure)));
  }
  return family.Build();
}

}  // namespace numaprobe::daemon
