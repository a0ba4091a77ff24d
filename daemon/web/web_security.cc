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

bool BasicAuth::Allows(std::string_view authorization) const {
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
  // crypt_data is 32 KiB: on the heap, not on the server thread's stack.
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
