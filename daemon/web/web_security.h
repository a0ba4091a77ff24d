// Enforcement of the web configuration (daemon/config/web_config.h): HTTP
// basic authentication against bcrypt hashes (libxcrypt). TLS is
// daemon/web/tls_options.h. OpenSSL stays out of this header.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/web_config.h"

namespace numaprobe::daemon {

class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}
  bool enabled() const { return !users_.empty(); }
  // Whether an Authorization header value ("Basic base64(user:password)";
  // empty when absent) names a configured user with the right password. The
  // bcrypt computation runs for unknown users too (against a dummy hash) and
  // the result is compared in constant time, so timing shows neither whether
  // a user exists nor how much of a password matched. A verified
  // (user, password, hash) is remembered by its SHA-256, so a scraper pays
  // bcrypt's cost once rather than on every scrape.
  bool Allows(std::string_view authorization) const;

 private:
  const std::map<std::string, std::string> users_;
  mutable std::mutex mutex_;
  mutable std::vector<std::string> verified_;  // SHA-256 digests, at most kMaxVerified
};

// Base64 (RFC 4648, with padding) decoding by OpenSSL; false on malformed input.
bool DecodeBase64(std::string_view in, std::string& out);

}  // namespace numaprobe::daemon
