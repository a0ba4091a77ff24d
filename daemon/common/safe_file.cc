// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/safe_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace numaprobe::daemon {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

FileText Refused(FileText result, const std::string& shown, const std::string& why) {
  result.problem = fmt::format("cannot read {}: {}", shown, why);
  result.text.clear();
  return result;
}

FileText Failed(const std::string& shown, int error) {
  FileText result;
  result.error = error;
  return Refused(std::move(result), shown, std::strerror(error));
}

// Reads the opened `fd` (O_NONBLOCK) if it is a regular file within `max_bytes`.
FileText ReadOpened(UniqueFd fd, const std::string& shown, std::uint64_t max_bytes) {
  FileText result;
  if (::fstat(fd.get(), &result.st) != 0) return Failed(shown, errno);
  if (!S_ISREG(result.st.st_mode)) {
    return Refused(std::move(result), shown, "it is " + FileKindOf(result.st) + ", not a regular file");
  }
  const std::string too_large = fmt::format("it is larger than the {} limit", ByteLimit(max_bytes));
  if (static_cast<std::uint64_t>(result.st.st_size) > max_bytes) return Refused(std::move(result), shown, too_large);
  // A regular file never blocks; cleared anyway, so the descriptor is what
  // an ordinary open would have given.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return Failed(shown, errno);
  result.text.reserve(static_cast<std::size_t>(result.st.st_size));
  char chunk[16384];
  // The loop stops once past the limit: the file may grow after fstat.
  while (result.text.size() <= max_bytes) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed(shown, errno);
    if (n == 0) break;
    result.text.append(chunk, static_cast<std::size_t>(n));
  }
  if (result.text.size() > max_bytes) return Refused(std::move(result), shown, too_large);
  return result;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::Release() { return std::exchange(fd_, -1); }

int UniqueFd::Close() { return ::close(Release()); }

std::string FileKindOf(const struct stat& st) {
  switch (st.st_mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a file";
  }
}

std::string ByteLimit(std::uint64_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

FileText ReadLimitedFile(const std::string& path, std::uint64_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.ok()) return Failed(path, errno);
  return ReadOpened(std::move(fd), path, max_bytes);
}

FileText ReadLimitedFileAt(int dir_fd, const std::string& name, const std::string& shown, std::uint64_t max_bytes) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
  if (!fd.ok()) {
    const int error = errno;
    // O_NOFOLLOW's ELOOP says "a symbolic link" less clearly than this does.
    struct stat st {};
    if (error == ELOOP && ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      FileText result = Failed(shown, error);
      result.st = st;
      return Refused(std::move(result), shown, "it is a symbolic link, which is not followed here");
    }
    return Failed(shown, error);
  }
  return ReadOpened(std::move(fd), shown, max_bytes);
}

NewFile CreateNewFileAt(int dir_fd, const std::string& prefix, mode_t mode) {
  NewFile file;
  // EEXIST with 64 random bits means someone planted that name: try others.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::uint64_t random = 0;
    if (::getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
      file.error = errno != 0 ? errno : EIO;
      return file;
    }
    file.name = fmt::format("{}{:016x}", prefix, random);
    file.fd = UniqueFd(
        ::openat(dir_fd, file.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
    if (file.fd.ok()) return file;
    file.error = errno;
    if (file.error != EEXIST) return file;
  }
  return file;
}

}  // namespace numaprobe::daemon
