// The web configuration file (--web.config.file) in the Prometheus
// exporter-toolkit format (docs/security.md): TLS, basic auth users with
// bcrypt hashes, extra response headers. Parsing only, text -> value; the
// web layer (daemon/web) enforces it. Keys the toolkit defines but numaprobe
// cannot honour (inline cert/key/client_ca, rate_limit) are errors naming the
// key, never silently ignored.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "daemon/config/config.h"

namespace numaprobe::daemon {

struct WebConfig {
  enum class ClientAuth {
    kNoClientCert,
    kRequestClientCert,
    kRequireAnyClientCert,
    kVerifyClientCertIfGiven,
    kRequireAndVerifyClientCert,
  };
  enum class TlsVersion { kTls12, kTls13 };
  struct Tls {
    std::string cert_file;
    std::string key_file;
    ClientAuth client_auth = ClientAuth::kNoClientCert;
    std::string client_ca_file;
    TlsVersion min_version = TlsVersion::kTls12;
    TlsVersion max_version = TlsVersion::kTls13;
    // Go's crypto/tls names ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    // "CurveP256"), checked against what the TLS layer knows when it starts
    // (daemon/web/tls_options.h). Empty: OpenSSL's defaults.
    std::vector<std::string> cipher_suites;
    std::vector<std::string> curve_preferences;
    bool prefer_server_cipher_suites = true;  // the exporter-toolkit's default
    // A verified client certificate must carry one of these subject
    // alternative names (DNS, e-mail, URI or IP). Empty: any.
    std::vector<std::string> client_allowed_sans;
    bool operator==(const Tls&) const = default;
  };
  std::optional<Tls> tls;  // absent: plain HTTP
  // Header name -> value, added to every response.
  std::vector<std::pair<std::string, std::string>> headers;
  // User name -> bcrypt hash ($2a$, $2b$, $2y$). Empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  bool operator==(const WebConfig&) const = default;
};

using WebConfigResult = std::variant<WebConfig, std::vector<ConfigError>>;

// An empty text is a valid config: plain HTTP, no authentication.
WebConfigResult ParseWebConfig(std::string_view yaml_text);
// Reads the file (the same limits as LoadConfigFile); relative cert_file,
// key_file and client_ca_file are resolved against the file's directory, as
// the exporter-toolkit does.
WebConfigResult LoadWebConfigFile(const std::string& path);

}  // namespace numaprobe::daemon
