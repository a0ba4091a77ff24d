// SPDX-License-Identifier: Apache-2.0
// arc4random(3) and arc4random_buf(3) for the portable build
// (cmake/portable.cmake), which must run on glibc 2.34: they came with glibc
// 2.36, and two static archives built on Debian 12 call them (libstdc++'s
// std::random_device, libxcrypt's salt generator). The link redirects those
// calls here (-Wl,--wrap=arc4random,--wrap=arc4random_buf).
//
// The same source of randomness as glibc 2.36's own implementation:
// getrandom(2) from the kernel's pool (glibc 2.25, Linux 3.17), blocking until
// the pool is initialised, and abort() if the kernel cannot give it, as glibc
// does: a program asking for secure random bytes must not go on without them.
#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" {

void __wrap_arc4random_buf(void* buffer, std::size_t size) {
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t got = getrandom(out, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::abort();
    }
    out += got;
    size -= static_cast<std::size_t>(got);
  }
}

std::uint32_t __wrap_arc4random(void) {
  std::uint32_t value;
  __wrap_arc4random_buf(&value, sizeof value);
  return value;
}

}  // extern "C"
