// SPDX-License-Identifier: Apache-2.0
// Enforcement of the web configuration (daemon/config/web_config.h): HTTP
// basic authentication against bcrypt hashes (libxcrypt). TLS is
// daemon/web/tls_options.h. OpenSSL stays out of this header.
//
// A request's Authorization header is screened on the I/O thread (Screen:
// parsing, and a lookup of credentials verified before); what needs bcrypt is
// a PasswordCheck that runs on the password-checking thread
// (daemon/web/password_checks.h), never on the threads that serve requests.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/web_config.h"

namespace numaprobe::daemon {

// (user, password, hash) triples that passed bcrypt, by their SHA-256, at
// most kMaxVerified (the oldest forgotten first): a scraper pays bcrypt's cost
// once per web configuration, not on every scrape. Only successes are kept,
// so a flood of wrong passwords cannot push a scraper's entry out.
class VerifiedPasswords {
 public:
  static constexpr std::size_t kMaxVerified = 64;
  bool Contains(const std::string& key) const;
  void Add(const std::string& key);

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> keys_;
};

// One bcrypt comparison, self-contained: it may outlive the request and the
// web configuration that asked for it.
struct PasswordCheck {
  std::string password;
  std::string hash;  // the user's, or the dummy one for an unknown user
  bool known = false;
  std::string key;  // for `verified`
  std::shared_ptr<VerifiedPasswords> verified;
  // bcrypt, then a constant-time comparison; remembers a success.
  bool Run() const;
};

class BasicAuth {
 public:
  // Also makes the dummy hash unknown users are checked against, at the
  // highest cost the users' hashes have.
  explicit BasicAuth(std::map<std::string, std::string> users);
  bool enabled() const { return !users_.empty(); }

  enum class Screening { kAllowed, kDenied, kNeedsCheck };
  // What an Authorization header value ("Basic base64(user:password)"; empty
  // when absent) gets without bcrypt: kDenied when it is missing or malformed
  // (or the password holds a NUL byte, which crypt(3) would cut it at),
  // kAllowed when these credentials were verified before, else kNeedsCheck
  // with `check` filled in. An unknown user needs a check too, against the
  // dummy hash, and the result is compared in constant time, so timing shows
  // neither whether a user exists nor how much of a password matched (as
  // long as every user's hash has the same cost: see the constructor's
  // warning).
  Screening Screen(std::string_view authorization, PasswordCheck& check) const;

  // Screen, then the check on this thread: for tests and fuzzers.
  bool Allows(std::string_view authorization) const;

  const std::string& dummy_hash() const { return dummy_hash_; }

 private:
  const std::map<std::string, std::string> users_;
  const std::string dummy_hash_;
  const std::shared_ptr<VerifiedPasswords> verified_ = std::make_shared<VerifiedPasswords>();
};

// Base64 (RFC 4648, with padding) decoding by OpenSSL; false on malformed input.
bool DecodeBase64(std::string_view in, std::string& out);

}  // namespace numaprobe::daemon
