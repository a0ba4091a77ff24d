#include "daemon/web/web_security.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace numaprobe::daemon {
namespace {

constexpr std::size_t kMaxVerified = 64;
// A valid bcrypt hash of a random password nobody knows: unknown users are
// checked against it so they cost as much as known ones.
constexpr const char* kDummyHash = "$2y$10$.BB78SjiQ/MtJzTq.p.wseLPMTtaeVlEovKSj2URa8R6e/7TlnrFe";

std::string Sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<const char*>(digest), length);
}

}  // namespace

bool DecodeBase64(std::string_view in, std::string& out) {
  out.clear();
  if (in.size() % 4 != 0) return false;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (std::size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = in[i + static_cast<std::size_t>(j)];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return false;  // data after '='
      v[j] = value(c);
      if (v[j] < 0) return false;
    }
    const unsigned triple = (static_cast<unsigned>(v[0]) << 18) | (static_cast<unsigned>(v[1]) << 12) |
                            (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
    out += static_cast<char>((triple >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((triple >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(triple & 0xff);
  }
  return true;
}

bool BasicAuth::Allows(const char* authorization) const {
  if (authorization == nullptr) return false;
  std::string_view header(authorization);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  if (header.size() < 6 || strncasecmp(header.data(), "Basic ", 6) != 0) return false;
  header.remove_prefix(6);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  if (header.size() > 4096) return false;
  std::string decoded;
  if (!DecodeBase64(header, decoded)) return false;
  const std::size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  const std::string user = decoded.substr(0, colon);
  const std::string password = decoded.substr(colon + 1);

  const auto found = users_.find(user);
  const bool known = found != users_.end();
  const std::string& hash = known ? found->second : std::string(kDummyHash);
  const std::string key = Sha256(user + '\0' + password + '\0' + hash);
  if (known && !key.empty()) {
    std::lock_guard lock(mutex_);
    if (std::find(verified_.begin(), verified_.end(), key) != verified_.end()) return true;
  }
  // crypt_data is 32 KiB: on the heap, not on civetweb's worker stack.
  auto data = std::make_unique<crypt_data>();
  const char* computed = crypt_r(password.c_str(), hash.c_str(), data.get());
  if (computed == nullptr || computed[0] == '*') return false;
  const bool match = std::strlen(computed) == hash.size() && CRYPTO_memcmp(computed, hash.data(), hash.size()) == 0;
  if (!match || !known) return false;
  if (!key.empty()) {
    std::lock_guard lock(mutex_);
    if (verified_.size() >= kMaxVerified) verified_.erase(verified_.begin());
    verified_.push_back(key);
  }
  return true;
}

}  // namespace numaprobe::daemon
