#include "daemon/probing/probe_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "kernels/clock.h"

namespace numaprobe::daemon {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);

// Opens an existing file before trying to create one: with
// fs.protected_regular (systemd's default), O_CREAT on a file another user owns
// in the sticky /run/lock fails with EACCES even when the file exists.
// O_NONBLOCK: a FIFO at the path must not hang the open (it is refused below).
int OpenOrCreate(const std::string& path) {
  while (true) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0 || errno != ENOENT) return fd;
    fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd >= 0) {
      // The creator's umask (systemd's UMask=0077) must not lock other users out.
      (void)fchmod(fd, 0644);
      return fd;
    }
    if (errno != EEXIST) return -1;  // EEXIST: another process created it first
  }
}

}  // namespace

bool LockDirectoryMissing(const std::string& path) {
  const std::string::size_type slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  return stat(directory.c_str(), &st) != 0 && errno == ENOENT;
}

kernels::Expected<ProbeLock> ProbeLock::Open(const std::string& path) {
  ProbeLock lock;
  if (path.empty()) return lock;
  lock.fd_ = OpenOrCreate(path);
  if (lock.fd_ < 0) {
    return kernels::Failure{kernels::Outcome::kInvalidSpec, "probe lock file " + path + ": " + std::strerror(errno)};
  }
  struct stat st {};
  if (fstat(lock.fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return kernels::Failure{kernels::Outcome::kInvalidSpec, "probe lock file " + path + ": not a regular file"};
  }
  lock.path_ = path;
  return lock;
}

ProbeLock::ProbeLock(ProbeLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      held_(std::exchange(other.held_, false)),
      path_(std::move(other.path_)),
      waited_ns_(other.waited_ns_) {}

ProbeLock& ProbeLock::operator=(ProbeLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    held_ = std::exchange(other.held_, false);
    path_ = std::move(other.path_);
    waited_ns_ = other.waited_ns_;
  }
  return *this;
}

ProbeLock::~ProbeLock() {
  if (fd_ >= 0) close(fd_);  // also releases a held lock
}

bool ProbeLock::Acquire(const std::atomic<bool>* stop, const std::function<void()>& on_busy) {
  if (fd_ < 0 || held_) return held_ = true;
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return held_ = true;
  int error = errno;
  if (on_busy) on_busy();
  const std::int64_t start_ns = kernels::MonotonicNs();
  while (true) {
    if (error != EWOULDBLOCK && error != EINTR) {
      // ENOLCK (no memory for lock records) is the only other documented
      // failure: measure without exclusion rather than stall the schedule.
      held_ = true;
      break;
    }
    if (stop != nullptr && stop->load()) break;
    std::this_thread::sleep_for(kPollInterval);
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      held_ = true;
      break;
    }
    error = errno;
  }
  waited_ns_ += kernels::MonotonicNs() - start_ns;
  return held_;
}

void ProbeLock::Release() {
  if (fd_ >= 0 && held_) flock(fd_, LOCK_UN);
  held_ = false;
}

}  // namespace numaprobe::daemon
