#include "daemon/web/tls_options.h"

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

namespace numaprobe::daemon {
namespace {

// Set by CivetTlsScope while mg_start runs on this thread (see the header).
thread_local CivetTlsScope* current_scope = nullptr;

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

// OpenSSL's own messages for a missing file are "system lib"; say what
// the operator can act on, naming the key and the path.
std::string Unreadable(const char* key, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    return std::string("tls_server_config.") + key + ": cannot read " + path + ": " +
           std::generic_category().message(errno);
  }
  std::fclose(file);
  return "";
}

std::string Rejected(const char* key, const std::string& path, const char* what) {
  return std::string("tls_server_config.") + key + ": " + path + ": " + what + ": " + OpenSslReason();
}

// Go's RequestClientCert and RequireAnyClientCert ask for a certificate but
// do not verify it: any chain the client sends is accepted.
int AcceptAnyCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*store*/) { return 1; }

int ProtocolVersion(WebConfig::TlsVersion version) {
  return version == WebConfig::TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
}

// Applies `tls` to `ctx`; "" or an error naming the key and path.
std::string Configure(SSL_CTX* ctx, const WebConfig::Tls& tls) {
  ERR_clear_error();
  // Neither bound below TLS 1.2: the parser refuses TLS10/TLS11 (RFC 8996).
  if (SSL_CTX_set_min_proto_version(ctx, ProtocolVersion(tls.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, ProtocolVersion(tls.max_version)) != 1) {
    return "tls_server_config: cannot set the protocol versions: " + OpenSslReason();
  }
  if (auto error = Unreadable("cert_file", tls.cert_file); !error.empty()) return error;
  // A chain file: the server certificate first, then intermediates (as Go's
  // tls.LoadX509KeyPair reads cert_file).
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
    return Rejected("cert_file", tls.cert_file, "not a PEM certificate");
  }
  if (auto error = Unreadable("key_file", tls.key_file); !error.empty()) return error;
  if (SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Rejected("key_file", tls.key_file, "not a PEM private key (encrypted keys are not supported)");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Rejected("key_file", tls.key_file, ("does not match cert_file " + tls.cert_file).c_str());
  }
  if (!tls.client_ca_file.empty()) {
    if (auto error = Unreadable("client_ca_file", tls.client_ca_file); !error.empty()) return error;
    if (SSL_CTX_load_verify_locations(ctx, tls.client_ca_file.c_str(), nullptr) != 1) {
      return Rejected("client_ca_file", tls.client_ca_file, "no PEM certificate");
    }
  }
  // Go's tls.ClientAuthType, value by value.
  using Auth = WebConfig::ClientAuth;
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
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case Auth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // Session resumption with client certificates needs a context id, or
  // OpenSSL fails resumed handshakes ("session id context uninitialized").
  static constexpr unsigned char kSessionContext[] = "numaprobe";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  return "";
}

// civetweb's lookups (src/openssl_dl.inl): dlopen(name), then dlsym through
// that handle. One function per library is enough to show the handle is
// ours; SSL_get_peer_certificate is the one OpenSSL 3 lacks.
struct CivetLookup {
  const char* library;
  const char* function;
};
constexpr CivetLookup kCivetLookups[] = {{"libcrypto.so", "X509_free"}, {"libssl.so", "SSL_get_peer_certificate"}};

// A shim's path, next to the executable (the build tree's lib/numaprobe, or
// the installed ../lib/<triplet>/numaprobe). dlopen's own search would use the
// RUNPATH of its caller, and under ASan/TSan the caller is the sanitizer
// runtime that intercepts dlopen, so the path is resolved here; without a
// match, dlopen searches as usual and its error names what it tried.
std::string ShimPath(const char* file) {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return file;
  for (const char* relative : {NUMAPROBE_TLS_SHIM_BUILD_RELDIR, NUMAPROBE_TLS_SHIM_INSTALL_RELDIR}) {
    const std::filesystem::path candidate = exe.parent_path() / relative / file;
    if (std::filesystem::exists(candidate, error)) return candidate.string();
  }
  return file;
}

std::string LoadShims() {
  for (const char* shim : {NUMAPROBE_TLS_CRYPTO_SHIM, NUMAPROBE_TLS_SSL_SHIM}) {
    // Never closed: civetweb keeps using it for the life of the process.
    if (dlopen(ShimPath(shim).c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      const char* why = dlerror();
      return std::string("cannot load ") + shim + ", numaprobe's OpenSSL 3 shim for civetweb (installed in " +
             NUMAPROBE_TLS_SHIM_DIR + "): " + (why != nullptr ? why : "unknown error");
    }
  }
  for (const CivetLookup& lookup : kCivetLookups) {
    // RTLD_NOLOAD: only what is already loaded, as civetweb's dlopen will see
    // it first; glibc matches the shims by soname.
    void* handle = dlopen(lookup.library, RTLD_LAZY | RTLD_NOLOAD);
    const bool found = handle != nullptr && dlsym(handle, lookup.function) != nullptr;
    if (handle != nullptr) dlclose(handle);
    if (!found) {
      return std::string("the OpenSSL 3 shims are loaded but dlopen(\"") + lookup.library + "\") does not find " +
             lookup.function + " through them; civetweb would crash on TLS connections";
    }
  }
  return "";
}

}  // namespace

std::string LoadCivetwebOpenSsl() {
  static std::mutex mutex;
  static bool loaded = false;
  const std::lock_guard lock(mutex);
  if (loaded) return "";
  std::string error = LoadShims();
  loaded = error.empty();
  return error;
}

std::string CheckTls(const WebConfig::Tls& tls) {
  const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (ctx == nullptr) return "tls_server_config: cannot create an OpenSSL context: " + OpenSslReason();
  return Configure(ctx.get(), tls);
}

CivetTlsScope::CivetTlsScope(const WebConfig::Tls& tls) : tls_(tls) { current_scope = this; }

CivetTlsScope::~CivetTlsScope() { current_scope = nullptr; }

int CivetTlsScope::InitSsl(void* ssl_ctx, void* /*user_data*/) {
  if (current_scope == nullptr) return -1;  // a TLS listener started outside a scope: refuse
  current_scope->error_ = Configure(static_cast<SSL_CTX*>(ssl_ctx), current_scope->tls_);
  return current_scope->error_.empty() ? 1 : -1;
}

}  // namespace numaprobe::daemon
