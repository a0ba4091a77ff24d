// SPDX-License-Identifier: Apache-2.0
// How the one-shot commands (`numaprobe reload`, `numaprobe baseline accept`
// and `reset`) find the `numaprobe serve` that uses a state directory, in
// every deployment: a systemd unit, a container whose image has no shell or
// kill (`podman exec NAME numaprobe ...`), a DaemonSet pod (`kubectl exec POD
// -- numaprobe ...`).
//
// `serve` holds an exclusive flock(2) on <state_directory>/serve.lock for as
// long as it runs, with its pid and its PID namespace written in the file. A
// command then knows the daemon of exactly that state directory (the one
// whose baseline it just changed), and:
//  - a pid is only used while its lock is held: the kernel drops the lock
//    when the daemon exits, so a stale pid file cannot send SIGHUP (whose
//    default action kills) to whatever process has the pid now;
//  - a pid from another PID namespace is not used: a host's root looking at
//    a container's state directory would read the container's pid 1, and
//    signal the host's init;
//  - the signal goes through a pidfd opened before the lock is checked a
//    second time, so the process signalled is the one that held the lock.
// Why not pid 1 or a scan of /proc for the binary: pid 1 is only right in a
// container, and a scan cannot tell which daemon uses which state directory
// (a host can run a systemd unit and a container side by side).
#pragma once

#include <string>

namespace numaprobe::daemon {

// Held by `numaprobe serve`; moving it keeps the lock, destroying it drops it.
class ServeLock {
 public:
  // Creates `state_directory` (mode 0700) if it is missing, then takes the
  // lock. On failure `error()` names the path and the reason: another serve
  // holds it (with that serve's pid), or the directory cannot be written.
  static ServeLock Acquire(const std::string& state_directory);

  ServeLock() = default;
  ServeLock(ServeLock&& other) noexcept;
  ServeLock& operator=(ServeLock&& other) noexcept;
  ServeLock(const ServeLock&) = delete;
  ServeLock& operator=(const ServeLock&) = delete;
  ~ServeLock();

  bool held() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  const std::string& directory() const { return directory_; }

 private:
  int fd_ = -1;
  std::string directory_;
  std::string error_;
};

// <state_directory>/serve.lock
std::string ServeLockPath(const std::string& state_directory);

// The outcome of signalling the serve of a state directory.
struct SignalResult {
  enum class Outcome {
    kSignalled,       // `pid` got the signal
    kNotRunning,      // no serve holds the lock (none runs, or it uses another directory)
    kOtherNamespace,  // a serve holds it, in a PID namespace this process cannot name
    kFailed,          // the lock file cannot be read, or the signal was refused: see `error`
  };
  Outcome outcome = Outcome::kNotRunning;
  int pid = 0;  // kSignalled, and kFailed when the signal was refused
  std::string error;
};

// Sends `signal` to the serve that holds the lock of `state_directory`.
SignalResult SignalServe(const std::string& state_directory, int signal);

}  // namespace numaprobe::daemon
