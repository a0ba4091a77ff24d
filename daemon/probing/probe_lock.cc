// SPDX-License-Identifier: Apache-2.0
#include "daemon/probing/probe_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "daemon/common/printable_text.h"
#include "kernels/clock.h"
#include "kernels/file_read.h"

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

std::string ProbeLockHolder::Describe() const {
  if (pid == 0) return "a process in another PID namespace (a container), or one that has exited";
  std::string out = "pid " + std::to_string(pid) + " (uid ";
  out += uid >= 0 ? std::to_string(uid) : std::string("unknown");
  if (!comm.empty()) out += ", \"" + comm + "\"";
  return out + ")";
}

std::optional<ProbeLockHolder> FlockHolderIn(std::string_view proc_locks, dev_t device, ino_t inode) {
  // "1: FLOCK  ADVISORY  WRITE 1234 fe:01:131075 0 EOF": the major and minor
  // device numbers in hex, the inode in decimal.
  const std::string wanted = fmt::format("{:02x}:{:02x}:{}", major(device), minor(device), inode);
  std::size_t start = 0;
  while (start < proc_locks.size()) {
    std::size_t end = proc_locks.find('\n', start);
    if (end == std::string_view::npos) end = proc_locks.size();
    std::istringstream line{std::string(proc_locks.substr(start, end - start))};
    start = end + 1;
    std::string id, type, mode, access, where;
    long pid = 0;
    if (!(line >> id >> type) || type == "->") continue;  // a waiter, not a holder
    if (type != "FLOCK" || !(line >> mode >> access >> pid >> where) || where != wanted) continue;
    ProbeLockHolder holder;
    holder.pid = pid > 0 ? static_cast<int>(pid) : 0;
    return holder;
  }
  return std::nullopt;
}

std::optional<ProbeLockHolder> ProbeLock::Holder(const std::string& proc_root) const {
  struct stat st {};
  if (fd_ < 0 || fstat(fd_, &st) != 0) return std::nullopt;
  const std::optional<std::string> locks = kernels::ReadSmallFile(proc_root + "/locks");
  if (!locks) return std::nullopt;
  std::optional<ProbeLockHolder> holder = FlockHolderIn(*locks, st.st_dev, st.st_ino);
  if (!holder || holder->pid == 0) return holder;
  const std::string process = proc_root + "/" + std::to_string(holder->pid);
  const std::string status = kernels::ReadSmallFile(process + "/status").value_or("");
  if (const std::size_t at = status.find("\nUid:"); at != std::string::npos) {
    holder->uid = std::atoi(status.c_str() + at + 5);
  }
  // comm is whatever the process named itself (prctl): escaped by the log,
  // and reduced to printable ASCII for the metric's label.
  holder->comm = PrintableText(kernels::ReadFirstLine(process + "/comm"));
  return holder;
}

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
