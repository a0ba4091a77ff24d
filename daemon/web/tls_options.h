// SPDX-License-Identifier: Apache-2.0
// tls_server_config (daemon/config/web_config.h) as an OpenSSL 3 server
// context, every key of the exporter-toolkit format honoured: certificate
// chain and key, the five client_auth_type values (Go's tls.ClientAuthType),
// client_ca_file (also the CA names sent in the CertificateRequest),
// min/max_version, cipher_suites and curve_preferences by their Go names,
// prefer_server_cipher_suites, and client_allowed_sans. OpenSSL stays out of
// this header.
#pragma once

#include <memory>
#include <string>

#include "daemon/config/web_config.h"
#include "kernels/result.h"

namespace boost::asio::ssl {
class context;
}

namespace numaprobe::daemon {

// The context a TLS listener hands every new connection, the files read now
// (a SIGHUP builds a new one: renewed certificates take effect). An
// unreadable cert_file, key_file or client_ca_file, a key that does not match
// the certificate, a file that is not PEM, or a cipher suite or curve OpenSSL
// lacks is an error naming the key (and the path). HttpServer::Start and
// Reconfigure build it, once per start or reload, before the running server
// is touched: building it is the check.
kernels::Expected<std::shared_ptr<boost::asio::ssl::context>> MakeTlsContext(const WebConfig::Tls& tls);

}  // namespace numaprobe::daemon
