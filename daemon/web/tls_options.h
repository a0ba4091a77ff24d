// tls_server_config (daemon/config/web_config.h) applied to civetweb's TLS
// listeners. numaprobe configures the OpenSSL context itself, through
// civetweb's init_ssl callback, rather than through civetweb's ssl_* options:
// those cannot express the five client_auth_type values or a maximum version,
// and report errors only as "SSL callback returned error". OpenSSL stays out
// of this header.
//
// Debian 12's civetweb 1.15 dlopen()s "libssl.so" and "libcrypto.so" and
// looks up SSL_get_peer_certificate, which OpenSSL 3 no longer exports: see
// LoadCivetwebOpenSsl and daemon/web/civetweb_openssl/.
#pragma once

#include <string>

#include "daemon/config/web_config.h"

namespace numaprobe::daemon {

// Loads numaprobe's two shim libraries (sonames libssl.so and libcrypto.so,
// found through the executable's RUNPATH) and verifies that civetweb's own
// dlopen calls will now get them with every function civetweb needs. Once per
// process; "" on success, else why TLS cannot be served. Call before starting
// a TLS listener: without it civetweb either fails to load OpenSSL (hosts
// without libssl-dev) or crashes on the first TLS connection.
std::string LoadCivetwebOpenSsl();

// Why `tls` cannot be served ("" if it can): builds a scratch OpenSSL context
// from it, so an unreadable cert_file, key_file or client_ca_file, a key that
// does not match the certificate, or a file that is not PEM is an error
// naming the key and the path. Run at start and at every SIGHUP before the
// running server is touched.
std::string CheckTls(const WebConfig::Tls& tls);

// Makes `tls` the configuration civetweb's init_ssl callback applies while
// this object lives. civetweb calls init_ssl from inside mg_start on the
// thread that calls it, so the scope is thread-local: construct it around the
// CivetServer constructor.
class CivetTlsScope {
 public:
  explicit CivetTlsScope(const WebConfig::Tls& tls);
  ~CivetTlsScope();
  CivetTlsScope(const CivetTlsScope&) = delete;
  CivetTlsScope& operator=(const CivetTlsScope&) = delete;
  // Why the callback refused the configuration ("" if it did not).
  const std::string& error() const { return error_; }

  // civetweb's init_ssl callback (mg_callbacks::init_ssl): configures the
  // SSL_CTX civetweb created from the scope's tls and returns 1 (done: civetweb
  // adds nothing), or -1 with error() set.
  static int InitSsl(void* ssl_ctx, void* user_data);

 private:
  const WebConfig::Tls& tls_;
  std::string error_;
};

}  // namespace numaprobe::daemon
