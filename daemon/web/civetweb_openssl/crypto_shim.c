/* Deliberately empty. libcivetweb.so.1 also dlopen()s "libcrypto.so", a name
 * only libssl-dev provides (it is the development symlink). This library has
 * the soname "libcrypto.so" and DT_NEEDED libcrypto.so.3: dlsym through it
 * finds every crypto function civetweb needs, all of which OpenSSL 3 still
 * exports under their old names. See ssl_shim.c. */
typedef int numaprobe_crypto_shim_is_empty; /* ISO C forbids an empty file */
