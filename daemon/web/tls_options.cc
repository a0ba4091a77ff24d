#include "daemon/web/tls_options.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

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

// Why OpenSSL could not load `path` for `key`, naming both. A file it could
// not open gets the system's reason ("No such file or directory"; OpenSSL's
// own is "system lib"), from the errno OpenSSL queues first: the files are
// opened by OpenSSL alone.
std::string Rejected(const char* key, const std::string& path, const char* what) {
  const unsigned long first = ERR_peek_error();
  if (first != 0 && ERR_SYSTEM_ERROR(first)) {
    ERR_clear_error();
    return std::string("tls_server_config.") + key + ": cannot read " + path + ": " +
           std::generic_category().message(ERR_GET_REASON(first));
  }
  return std::string("tls_server_config.") + key + ": " + path + ": " + what + ": " + OpenSslReason();
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
    if (SSL_CTX_load_verify_locations(ctx, tls.client_ca_file.c_str(), nullptr) != 1) {
      return Rejected("client_ca_file", tls.client_ca_file, "no PEM certificate");
    }
    // The CA names the CertificateRequest lists, so a client with several
    // certificates can pick the one this server accepts (as Go sends them).
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (names == nullptr) return Rejected("client_ca_file", tls.client_ca_file, "no CA name readable");
    SSL_CTX_set_client_CA_list(ctx, names);
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
  // A chain file: the server certificate first, then intermediates (as Go's
  // tls.LoadX509KeyPair reads cert_file).
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
    return Rejected("cert_file", tls.cert_file, "not a PEM certificate");
  }
  // Without a callback OpenSSL asks for an encrypted key's pass phrase on the
  // terminal, or reads stdin: the daemon would block at start or on SIGHUP.
  // Refusing the key is the answer (no pass phrase is configured).
  SSL_CTX_set_default_passwd_cb(ctx, [](char*, int, int, void*) { return 0; });
  if (SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Rejected("key_file", tls.key_file, "not a PEM private key (encrypted keys are not supported)");
  }
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
