// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/tls_options.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/safe_file.h"

namespace numaprobe::daemon {
namespace {

using kernels::Failure;
using kernels::Outcome;

// The reason OpenSSL gave for the last failure ("no start line", "key values
// mismatch"), emptying its per-thread error queue.
std::string OpenSslReason() {
  std::string reason;
  while (const unsigned long error = ERR_get_error()) {
    if (!reason.empty()) continue;  // the first is the cause; drain the rest
    const char* text = ERR_reason_error_string(error);
    reason = text != nullptr ? text : "error " + std::to_string(error);
  }
  return reason.empty() ? "unknown OpenSSL error" : reason;
}

// Why OpenSSL could not use the text of `path` for `key`, naming both.
std::string Rejected(const char* key, const std::string& path, const char* what) {
  return std::string("tls_server_config.") + key + ": " + path + ": " + what + ": " + OpenSslReason();
}

// A certificate, key or CA file is a few KiB; a CA bundle (Mozilla's) about
// 220 KiB. Anything past this is not one.
constexpr std::uint64_t kMaxPemBytes = 1024 * 1024;

// The text of the file `key` names, read by common/safe_file.h (a regular
// file within kMaxPemBytes: a FIFO or /dev/zero named there must not hang or
// exhaust a start or a SIGHUP), as an OpenSSL memory BIO; or the error.
using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
struct PemFile {
  std::string text;  // the BIO reads it in place
  Bio bio{nullptr, &BIO_free};
  std::string problem;
};
PemFile ReadPem(const char* key, const std::string& path) {
  PemFile file;
  FileText read = ReadLimitedFile(path, kMaxPemBytes);
  if (!read.ok()) {
    file.problem = std::string("tls_server_config.") + key + ": " + read.problem;
    return file;
  }
  file.text = std::move(read.text);
  file.bio.reset(BIO_new_mem_buf(file.text.data(), static_cast<int>(file.text.size())));
  if (file.bio == nullptr) file.problem = std::string("tls_server_config.") + key + ": " + OpenSslReason();
  return file;
}

// True when the only error OpenSSL queued is "no start line" at the end of
// the text: a PEM reader's way of saying there was nothing more.
bool OnlyEndOfPem() {
  const unsigned long error = ERR_peek_last_error();
  if (ERR_GET_LIB(error) != ERR_LIB_PEM || ERR_GET_REASON(error) != PEM_R_NO_START_LINE) return false;
  ERR_clear_error();
  return true;
}

// cert_file: the server certificate first, then intermediates (as Go's
// tls.LoadX509KeyPair reads it, and SSL_CTX_use_certificate_chain_file would).
std::string UseCertificateChain(SSL_CTX* ctx, const std::string& path) {
  PemFile file = ReadPem("cert_file", path);
  if (!file.problem.empty()) return file.problem;
  X509* leaf = PEM_read_bio_X509_AUX(file.bio.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return Rejected("cert_file", path, "not a PEM certificate");
  const int used = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (used != 1) return Rejected("cert_file", path, "not a usable certificate");
  SSL_CTX_clear_chain_certs(ctx);
  while (X509* intermediate = PEM_read_bio_X509(file.bio.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, intermediate) != 1) {  // takes it on success only
      X509_free(intermediate);
      return Rejected("cert_file", path, "cannot add an intermediate certificate");
    }
  }
  if (!OnlyEndOfPem()) return Rejected("cert_file", path, "not a PEM certificate chain");
  return "";
}

std::string UsePrivateKey(SSL_CTX* ctx, const std::string& path) {
  PemFile file = ReadPem("key_file", path);
  if (!file.problem.empty()) return file.problem;
  // Without a callback OpenSSL asks for an encrypted key's pass phrase on the
  // terminal, or reads stdin: the daemon would block at start or on SIGHUP.
  // Refusing the key is the answer (no pass phrase is configured).
  EVP_PKEY* key = PEM_read_bio_PrivateKey(
      file.bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr);
  if (key == nullptr) {
    return Rejected("key_file", path, "not a PEM private key (encrypted keys are not supported)");
  }
  const int used = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (used != 1) return Rejected("key_file", path, "not a usable private key");
  return "";
}

// client_ca_file: every certificate into the verification store, and each
// distinct subject into the CA names the CertificateRequest lists, so a
// client with several certificates can pick the one this server accepts (as
// Go sends them, and SSL_load_client_CA_file would).
std::string UseClientCas(SSL_CTX* ctx, const std::string& path) {
  PemFile file = ReadPem("client_ca_file", path);
  if (!file.problem.empty()) return file.problem;
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  if (names == nullptr) return Rejected("client_ca_file", path, "out of memory");
  int count = 0;
  while (X509* ca = PEM_read_bio_X509(file.bio.get(), nullptr, nullptr, nullptr)) {
    ++count;
    const bool stored = X509_STORE_add_cert(store, ca) == 1;
    const X509_NAME* subject = X509_get_subject_name(ca);
    bool seen = false;
    for (int i = 0; i < sk_X509_NAME_num(names) && !seen; ++i)
      seen = X509_NAME_cmp(sk_X509_NAME_value(names, i), subject) == 0;
    X509_NAME* copy = seen ? nullptr : X509_NAME_dup(subject);
    X509_free(ca);
    if (!stored || (!seen && (copy == nullptr || sk_X509_NAME_push(names, copy) == 0))) {
      X509_NAME_free(copy);
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      return Rejected("client_ca_file", path, "cannot use a CA certificate");
    }
  }
  if (count == 0 || !OnlyEndOfPem()) {
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    return Rejected("client_ca_file", path, "no PEM certificate");
  }
  SSL_CTX_set_client_CA_list(ctx, names);  // takes `names`
  return "";
}

// Go's crypto/tls names for the TLS 1.2 suites it implements without known
// weaknesses, and OpenSSL's names for them. As in Go, TLS 1.3's suites are
// not configurable.
constexpr std::pair<std::string_view, std::string_view> kCipherSuites[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
};

// Go's tls.CurveID names and OpenSSL's group names.
constexpr std::pair<std::string_view, std::string_view> kCurves[] = {{"CurveP256", "P-256"},
                                                                     {"CurveP384", "P-384"},
                                                                     {"CurveP521", "P-521"},
                                                                     {"X25519", "X25519"}};

// "A:B:C" in OpenSSL's names for Go's `names`, or the first unknown name.
template <std::size_t N>
std::pair<std::string, std::string> OpenSslList(const std::vector<std::string>& names,
                                                const std::pair<std::string_view, std::string_view> (&table)[N]) {
  std::string list;
  for (const std::string& name : names) {
    const auto* found =
        std::find_if(std::begin(table), std::end(table), [&](const auto& e) { return e.first == name; });
    if (found == std::end(table)) return {"", name};
    list += (list.empty() ? "" : ":") + std::string(found->second);
  }
  return {list, ""};
}

template <std::size_t N>
std::string Known(const std::pair<std::string_view, std::string_view> (&table)[N]) {
  std::string known;
  for (const auto& entry : table) known += (known.empty() ? "" : ", ") + std::string(entry.first);
  return known;
}

// client_allowed_sans, kept with the context (freed by SSL_CTX_free).
int AllowedSansIndex() {
  static const int index =
      SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr,
                               [](void* /*parent*/, void* sans, CRYPTO_EX_DATA* /*data*/, int /*index*/, long /*argl*/,
                                  void* /*argp*/) { delete static_cast<std::vector<std::string>*>(sans); });
  return index;
}

// The certificate's subject alternative names as text: DNS names, e-mail
// addresses, URIs and IP addresses (in inet_ntop form), as Go compares them.
std::vector<std::string> SubjectAltNames(X509* certificate) {
  std::vector<std::string> names;
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (sans == nullptr) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    const ASN1_STRING* text = nullptr;
    if (name->type == GEN_DNS) text = name->d.dNSName;
    if (name->type == GEN_EMAIL) text = name->d.rfc822Name;
    if (name->type == GEN_URI) text = name->d.uniformResourceIdentifier;
    if (text != nullptr) {
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                         static_cast<std::size_t>(ASN1_STRING_length(text)));
    } else if (name->type == GEN_IPADD) {
      const int length = ASN1_STRING_length(name->d.iPAddress);
      char address[INET6_ADDRSTRLEN] = {};
      if ((length == 4 || length == 16) &&
          inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name->d.iPAddress), address,
                    sizeof address) != nullptr) {
        names.emplace_back(address);
      }
    }
  }
  GENERAL_NAMES_free(sans);
  return names;
}

// Verification as OpenSSL does it, plus, for the client's own certificate
// (depth 0) of a verified chain, one of its SANs in client_allowed_sans.
int VerifyAllowedSans(int preverify_ok, X509_STORE_CTX* store) {
  if (preverify_ok != 1 || X509_STORE_CTX_get_error_depth(store) != 0) return preverify_ok;
  const auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* allowed =
      static_cast<const std::vector<std::string>*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), AllowedSansIndex()));
  if (allowed == nullptr) return 1;
  for (const std::string& san : SubjectAltNames(X509_STORE_CTX_get_current_cert(store))) {
    if (std::find(allowed->begin(), allowed->end(), san) != allowed->end()) return 1;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
  return 0;
}

// Go's RequestClientCert and RequireAnyClientCert ask for a certificate but
// do not verify it: any chain the client sends is accepted.
int AcceptAnyCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*store*/) { return 1; }

int ProtocolVersion(WebConfig::TlsVersion version) {
  return version == WebConfig::TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
}

std::string ConfigureCiphers(SSL_CTX* ctx, const WebConfig::Tls& tls) {
  if (!tls.cipher_suites.empty()) {
    const auto [list, unknown] = OpenSslList(tls.cipher_suites, kCipherSuites);
    if (!unknown.empty()) {
      return "tls_server_config.cipher_suites: unknown or insecure suite \"" + unknown +
             "\" (known: " + Known(kCipherSuites) + ")";
    }
    if (SSL_CTX_set_cipher_list(ctx, list.c_str()) != 1) {
      return "tls_server_config.cipher_suites: OpenSSL refuses " + list + ": " + OpenSslReason();
    }
  }
  if (!tls.curve_preferences.empty()) {
    const auto [list, unknown] = OpenSslList(tls.curve_preferences, kCurves);
    if (!unknown.empty()) {
      return "tls_server_config.curve_preferences: unknown curve \"" + unknown + "\" (known: " + Known(kCurves) + ")";
    }
    if (SSL_CTX_set1_groups_list(ctx, list.c_str()) != 1) {
      return "tls_server_config.curve_preferences: OpenSSL refuses " + list + ": " + OpenSslReason();
    }
  }
  if (tls.prefer_server_cipher_suites) {
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  } else {
    SSL_CTX_clear_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  }
  return "";
}

std::string ConfigureClientAuth(SSL_CTX* ctx, const WebConfig::Tls& tls) {
  if (!tls.client_ca_file.empty()) {
    if (std::string error = UseClientCas(ctx, tls.client_ca_file); !error.empty()) return error;
  }
  using Auth = WebConfig::ClientAuth;
  SSL_verify_cb verify = tls.client_allowed_sans.empty() ? nullptr : &VerifyAllowedSans;
  switch (tls.client_auth) {
    case Auth::kNoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case Auth::kRequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, &AcceptAnyCertificate);
      break;
    case Auth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, &AcceptAnyCertificate);
      break;
    case Auth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify);
      break;
    case Auth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verify);
      break;
  }
  if (!tls.client_allowed_sans.empty()) {
    SSL_CTX_set_ex_data(ctx, AllowedSansIndex(), new std::vector<std::string>(tls.client_allowed_sans));
  }
  // Session resumption with client certificates needs a context id, or
  // OpenSSL fails resumed handshakes ("session id context uninitialized").
  static constexpr unsigned char kSessionContext[] = "numaprobe";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  return "";
}

// Applies `tls` to `ctx`; "" or an error naming the key and path.
std::string Configure(SSL_CTX* ctx, const WebConfig::Tls& tls) {
  ERR_clear_error();
  // Neither bound below TLS 1.2: the parser refuses TLS10/TLS11 (RFC 8996).
  if (SSL_CTX_set_min_proto_version(ctx, ProtocolVersion(tls.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, ProtocolVersion(tls.max_version)) != 1) {
    return "tls_server_config: cannot set the protocol versions: " + OpenSslReason();
  }
  // Names first: an unknown suite or curve is reported even when a file is wrong too.
  if (auto error = ConfigureCiphers(ctx, tls); !error.empty()) return error;
  if (std::string error = UseCertificateChain(ctx, tls.cert_file); !error.empty()) return error;
  if (std::string error = UsePrivateKey(ctx, tls.key_file); !error.empty()) return error;
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Rejected("key_file", tls.key_file, ("does not match cert_file " + tls.cert_file).c_str());
  }
  return ConfigureClientAuth(ctx, tls);
}

}  // namespace

kernels::Expected<std::shared_ptr<boost::asio::ssl::context>> MakeTlsContext(const WebConfig::Tls& tls) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    return Failure{Outcome::kInvalidSpec, "tls_server_config: cannot create an OpenSSL context: " + OpenSslReason()};
  }
  auto context = std::make_shared<boost::asio::ssl::context>(ctx);  // owns ctx from here
  if (std::string error = Configure(ctx, tls); !error.empty()) return Failure{Outcome::kInvalidSpec, std::move(error)};
  return context;
}

}  // namespace numaprobe::daemon
