// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/web_security.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace numaprobe::daemon {
namespace {

std::string Sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(digest), length);
}

// A bcrypt hash at `cost` of no password anyone knows: a fresh random salt
// (crypt_gensalt_rn, so crypt_r accepts it and does the full work) and 31
// random characters where the hash would be, which no computation yields.
std::string DummyHash(int cost) {
  unsigned char random[16 + 31];
  if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("RAND_bytes failed");
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2y$", static_cast<unsigned long>(cost), reinterpret_cast<const char*>(random), 16, setting,
                       sizeof setting) == nullptr) {
    throw std::runtime_error("crypt_gensalt_rn cannot make a bcrypt salt");
  }
  static constexpr char kAlphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string hash(setting);
  for (int i = 0; i < 31; ++i) hash += kAlphabet[random[16 + i] % 64];
  return hash;
}

// The highest cost among the users' hashes (10, the toolkit's example, if
// none); a warning when they differ: a user of a lower cost answers faster
// than an unknown one, and timing then tells that user exists.
int DummyCost(const std::map<std::string, std::string>& users) {
  std::set<int> costs;
  for (const auto& [user, hash] : users) {
    if (const int cost = BcryptCost(hash); cost != 0) costs.insert(cost);
  }
  if (costs.size() > 1) {
    spdlog::warn(
        "basic_auth_users: the bcrypt hashes have {} different costs (from {} to {}): response times can tell "
        "users of a lower cost from unknown ones; hash every password at the same cost",
        costs.size(), *costs.begin(), *costs.rbegin());
  }
  return costs.empty() ? 10 : *costs.rbegin();
}

}  // namespace

bool VerifiedPasswords::Contains(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

void VerifiedPasswords::Add(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) return;
  if (keys_.size() >= kMaxVerified) keys_.erase(keys_.begin());
  keys_.push_back(key);
}

bool PasswordCheck::Run() const {
  // crypt_data is 32 KiB: on the heap, not on the thread's stack.
  auto data = std::make_unique<crypt_data>();
  const char* computed = crypt_r(password.c_str(), hash.c_str(), data.get());
  if (computed == nullptr || computed[0] == '*') return false;
  const bool match = std::strlen(computed) == hash.size() && CRYPTO_memcmp(computed, hash.data(), hash.size()) == 0;
  if (!match || !known) return false;
  if (!key.empty() && verified) verified->Add(key);
  return true;
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(std::move(users)), dummy_hash_(users_.empty() ? std::string() : DummyHash(DummyCost(users_))) {}

bool DecodeBase64(std::string_view in, std::string& out) {
  out.clear();
  // EVP_DecodeBlock would skip surrounding white space; the header's is
  // already trimmed, so anything but the alphabet is malformed here.
  if (in.size() % 4 != 0 || in.find_first_of(" \t\r\n") != std::string_view::npos) return false;
  const std::size_t padding = in.size() - std::min(in.size(), in.find_last_not_of('=') + 1);
  if (padding > 2 || in.substr(0, in.size() - padding).find('=') != std::string_view::npos) return false;
  out.resize(in.size() / 4 * 3);
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (decoded < 0) {
    out.clear();
    return false;
  }
  // EVP_DecodeBlock counts the padding's zero bytes too.
  out.resize(static_cast<std::size_t>(decoded) - padding);
  return true;
}

BasicAuth::Screening BasicAuth::Screen(std::string_view authorization, PasswordCheck& check) const {
  std::string_view header(authorization);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  if (header.size() < 6 || strncasecmp(header.data(), "Basic ", 6) != 0) return Screening::kDenied;
  header.remove_prefix(6);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  if (header.size() > 4096) return Screening::kDenied;
  std::string decoded;
  if (!DecodeBase64(header, decoded)) return Screening::kDenied;
  const std::size_t colon = decoded.find(':');
  if (colon == std::string::npos) return Screening::kDenied;
  std::string user = decoded.substr(0, colon);
  std::string password = decoded.substr(colon + 1);
  // crypt(3) reads the password as a C string: "s3cret\0anything" would be
  // checked as "s3cret". No configured password can hold a NUL, so no such
  // request can be right.
  if (password.find('\0') != std::string::npos) return Screening::kDenied;

  const auto found = users_.find(user);
  check.known = found != users_.end();
  check.hash = check.known ? found->second : dummy_hash_;
  check.key = Sha256(user + '\0' + password + '\0' + check.hash);
  check.password = std::move(password);
  check.verified = verified_;
  if (check.known && !check.key.empty() && verified_->Contains(check.key)) return Screening::kAllowed;
  return Screening::kNeedsCheck;
}

bool BasicAuth::Allows(std::string_view authorization) const {
  PasswordCheck check;
  switch (Screen(authorization, check)) {
    case Screening::kAllowed:
      return true;
    case Screening::kDenied:
      return false;
    case Screening::kNeedsCheck:
      break;
  }
  return check.Run();
}

}  // namespace numaprobe::daemon
