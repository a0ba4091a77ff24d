// SPDX-License-Identifier: Apache-2.0
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

// The highest bcrypt cost basic_auth_users may use. The exporter-toolkit
// takes any cost bcrypt defines (4-31; Go's bcrypt.Cost), but every step
// doubles the work: cost 12 is 0.2-0.5 s of one core per check (4 ms at 4,
// 50-140 ms at 10, measured on the development machine; docs/security.md),
// 20 is minutes, 31 days. A check holds the server's one password-checking
// thread (daemon/web/password_checks.h), so past 12 a scraper's first check
// could miss Prometheus' 10 s scrape timeout behind a full queue, and a
// single request would make the checker useless for minutes.
inline constexpr int kMaxBcryptCost = 12;

// The cost of a bcrypt hash ($2a$ / $2b$ / $2y$, two-digit cost 4-31, 53
// characters of salt and hash), or 0 if it is not one.
int BcryptCost(const std::string& hash);

// An empty text is a valid config: plain HTTP, no authentication.
WebConfigResult ParseWebConfig(std::string_view yaml_text);
// Reads the file (the same limits as LoadConfigFile); relative cert_file,
// key_file and client_ca_file are resolved against the file's directory, as
// the exporter-toolkit does.
WebConfigResult LoadWebConfigFile(const std::string& path);

}  // namespace numaprobe::daemon
