// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/serve_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

namespace numaprobe::daemon {
namespace {

constexpr const char* kFileName = "serve.lock";

std::string Errno(int error) { return std::strerror(error); }

// This process's PID namespace ("pid:[4026531836]"), "" if /proc cannot say.
std::string OwnPidNamespace() {
  std::array<char, 64> link{};
  const ssize_t n = ::readlink("/proc/self/ns/pid", link.data(), link.size() - 1);
  return n > 0 ? std::string(link.data(), static_cast<std::size_t>(n)) : "";
}

struct Holder {
  int pid = 0;
  std::string pid_namespace;
};

// "pid N\npid_namespace NS\n", as Acquire writes it.
std::optional<Holder> ReadHolder(int fd) {
  std::array<char, 256> buffer{};
  const ssize_t n = ::pread(fd, buffer.data(), buffer.size() - 1, 0);
  if (n <= 0) return std::nullopt;
  std::istringstream in(std::string(buffer.data(), static_cast<std::size_t>(n)));
  Holder holder;
  for (std::string key, value; in >> key >> value;) {
    if (key == "pid") {
      try {
        holder.pid = std::stoi(value);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    } else if (key == "pid_namespace") {
      holder.pid_namespace = value;
    }
  }
  if (holder.pid <= 0) return std::nullopt;
  return holder;
}

// glibc 2.36's <sys/pidfd.h> declares these without C linkage (fixed in 2.37),
// so they are called through syscall(2).
int PidfdOpen(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int signal) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
}

// True while some process holds the exclusive lock of `fd`'s file.
bool LockHeld(int fd, int& error) {
  error = 0;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
    return false;
  }
  if (errno != EWOULDBLOCK) error = errno;
  return error == 0;
}

// The holder's file, written right after it took the lock: a command that
// comes in between sees it empty for a moment.
std::optional<Holder> ReadHolderOfLockedFile(int fd) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (auto holder = ReadHolder(fd)) return holder;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

}  // namespace

std::string ServeLockPath(const std::string& state_directory) { return state_directory + "/" + kFileName; }

ServeLock ServeLock::Acquire(const std::string& state_directory) {
  ServeLock lock;
  lock.directory_ = state_directory;
  const std::string path = ServeLockPath(state_directory);
  if (::mkdir(state_directory.c_str(), 0700) != 0 && errno != EEXIST) {
    lock.error_ = "cannot create " + state_directory + ": " + Errno(errno);
    return lock;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (fd < 0) {
    lock.error_ = "cannot open " + path + ": " + Errno(errno);
    return lock;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    lock.error_ = path + " is not a regular file";
    ::close(fd);
    return lock;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      const std::optional<Holder> holder = ReadHolderOfLockedFile(fd);
      lock.error_ = "another numaprobe serve" + (holder ? " (pid " + std::to_string(holder->pid) + ")" : "") +
                    " uses the state directory " + state_directory;
    } else {
      lock.error_ = "cannot lock " + path + ": " + Errno(error);
    }
    ::close(fd);
    return lock;
  }
  const std::string text = "pid " + std::to_string(::getpid()) + "\npid_namespace " + OwnPidNamespace() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    lock.error_ = "cannot write " + path + ": " + Errno(errno);
    ::close(fd);
    return lock;
  }
  lock.fd_ = fd;
  return lock;
}

ServeLock::ServeLock(ServeLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), directory_(std::move(other.directory_)), error_(std::move(other.error_)) {}

ServeLock& ServeLock::operator=(ServeLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    directory_ = std::move(other.directory_);
    error_ = std::move(other.error_);
  }
  return *this;
}

// Closing drops the lock. The file stays: removing it would race with a
// serve that has just opened it.
ServeLock::~ServeLock() {
  if (fd_ >= 0) ::close(fd_);
}

SignalResult SignalServe(const std::string& state_directory, int signal) {
  using Outcome = SignalResult::Outcome;
  const std::string path = ServeLockPath(state_directory);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return {Outcome::kNotRunning, 0, ""};
    return {Outcome::kFailed, 0, "cannot read " + path + ": " + Errno(errno)};
  }
  const auto done = [fd](SignalResult result) {
    ::close(fd);
    return result;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return done({Outcome::kFailed, 0, path + " is not a regular file"});
  int error = 0;
  if (!LockHeld(fd, error)) {
    if (error != 0) return done({Outcome::kFailed, 0, "cannot check the lock of " + path + ": " + Errno(error)});
    return done({Outcome::kNotRunning, 0, ""});
  }
  const std::optional<Holder> holder = ReadHolderOfLockedFile(fd);
  if (!holder) return done({Outcome::kFailed, 0, path + " is locked but names no pid"});
  const std::string own = OwnPidNamespace();
  if (own.empty() || holder->pid_namespace != own) {
    return done({Outcome::kOtherNamespace, holder->pid,
                 "numaprobe serve runs in another PID namespace (" + holder->pid_namespace + ", this command in " +
                     (own.empty() ? "an unknown one" : own) + ")"});
  }
  // A pidfd names the process itself, not its number: if the lock is still
  // held (by the same pid) once the pidfd is open, the signal reaches the
  // holder even if it exits meanwhile and its number is reused.
  const int pidfd = PidfdOpen(holder->pid);
  const std::optional<Holder> still = LockHeld(fd, error) ? ReadHolder(fd) : std::nullopt;
  if (!still || still->pid != holder->pid) {
    if (pidfd >= 0) ::close(pidfd);
    return done({Outcome::kNotRunning, 0, ""});
  }
  int sent = -1;
  if (pidfd >= 0) {
    sent = PidfdSendSignal(pidfd, signal);
    const int send_error = errno;
    ::close(pidfd);
    errno = send_error;
  } else {
    // Kernels before 5.3, or a seccomp profile without pidfd_open: the
    // lock was held a moment ago, which is as close as kill(2) gets.
    sent = ::kill(holder->pid, signal);
  }
  if (sent != 0) {
    const int send_error = errno;
    std::string why = Errno(send_error);
    if (send_error == EPERM) why += ": run this as root or as the user numaprobe serve runs as";
    return done({Outcome::kFailed, holder->pid,
                 "cannot signal numaprobe serve (pid " + std::to_string(holder->pid) + "): " + why});
  }
  return done({Outcome::kSignalled, holder->pid, ""});
}

}  // namespace numaprobe::daemon
