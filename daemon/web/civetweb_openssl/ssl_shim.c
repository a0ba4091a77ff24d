/* The OpenSSL 1.1 name Debian 12's civetweb 1.15 still looks up.
 *
 * libcivetweb.so.1 dlopen()s "libssl.so" and dlsym()s each function it needs
 * through that handle (civetweb src/openssl_dl.inl, built with
 * OPENSSL_API_1_1). OpenSSL 3 renamed SSL_get_peer_certificate to
 * SSL_get1_peer_certificate (the old name is only a macro in <openssl/ssl.h>),
 * so civetweb's pointer stays NULL and its first TLS connection calls it.
 * This library has the soname "libssl.so": once numaprobe has loaded it
 * (daemon/web/tls_options.cc), civetweb's dlopen("libssl.so") returns it, and
 * dlsym through it finds every other function in its DT_NEEDED libssl.so.3.
 */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate

/* Same reference semantics: OpenSSL 1.1's SSL_get_peer_certificate took a
 * reference as get1 does, and civetweb X509_free()s the result. */
__attribute__((visibility("default"))) X509 *SSL_get_peer_certificate(const SSL *ssl) {
  return SSL_get1_peer_certificate(ssl);
}
