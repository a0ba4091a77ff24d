// SPDX-License-Identifier: Apache-2.0
#include "kernels/file_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace numaprobe::kernels {

int ReadWholeFile(const std::string& path, std::string& out) {
  // open/read rather than ifstream: ifstream opens a directory and "reads" it
  // as an empty file, and it loses errno.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buffer[8192];
  int error = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return error;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::string text;
  if (ReadWholeFile(path, text) != 0) return std::nullopt;
  return text;
}

std::string ReadFirstLine(const std::string& path) {
  std::string text = ReadSmallFile(path).value_or("");
  if (const std::size_t newline = text.find('\n'); newline != std::string::npos) text.resize(newline);
  return text;
}

}  // namespace numaprobe::kernels
