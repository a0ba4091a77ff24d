// SPDX-License-Identifier: Apache-2.0
// Host-wide exclusion between numaprobe processes.
//
// Two probes running at once measure each other: a bandwidth burst loads the
// memory controller another process's latency probe is timing. One daemon
// never runs two probes at a time (ProbeWorker), but one host can hold several
// numaprobe processes: the systemd service, a DaemonSet pod with the host's
// /run/lock mounted, a person's `numaprobe probe`. They take turns through
// flock(2) on one file, held around each probe (buffer preparation included):
//  - the kernel drops the lock when its holder exits or crashes, so a killed
//    process never wedges the others (no stale lock files, no pid checks);
//  - a read-only descriptor suffices, so any user can take a lock file that
//    another user created.
// That also means any local user who can open the file can hold it and stall
// every probe (docs/security.md, "The probe lock"): a holder is named from
// /proc/locks (Holder) in the log and in numaprobe_probe_lock_holder_info, so
// a stall has a pid and a uid; where other users must not take part, point
// probe_lock_file into a directory only numaprobe's users can reach.
//
// Thread safety: one thread at a time per ProbeLock.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace numaprobe::daemon {

// Who holds a flock (a line of /proc/locks) and what the process is.
struct ProbeLockHolder {
  // As /proc/locks shows it: 0 when the holder is in a PID namespace this
  // process cannot see (a container), or has exited.
  int pid = 0;
  int uid = -1;      // real uid from /proc/PID/status; -1 unknown
  std::string comm;  // /proc/PID/comm, "" unknown
  bool operator==(const ProbeLockHolder&) const = default;
  // "pid 1234 (uid 1000, \"flock\")", or why it cannot be named.
  std::string Describe() const;
};

// The holder of the flock on the file (device, inode) in a /proc/locks text;
// nullopt if the text shows none. Waiters ("->" lines) are not holders.
std::optional<ProbeLockHolder> FlockHolderIn(std::string_view proc_locks, dev_t device, ino_t inode);

class ProbeLock {
 public:
  // Exclusion disabled (an empty probe_lock_file): Acquire always succeeds at once.
  ProbeLock() = default;
  // Opens the lock file, creating it world-readable if missing. The failure
  // names the path and the system error.
  static kernels::Expected<ProbeLock> Open(const std::string& path);

  ProbeLock(ProbeLock&& other) noexcept;
  ProbeLock& operator=(ProbeLock&& other) noexcept;
  ProbeLock(const ProbeLock&) = delete;
  ProbeLock& operator=(const ProbeLock&) = delete;
  ~ProbeLock();

  // Takes the lock, waiting while another process holds it. False if `stop`
  // was raised first. `on_busy` (may be empty) runs once when the first try
  // finds the lock taken. Polls: a blocking flock cannot watch a stop flag.
  bool Acquire(const std::atomic<bool>* stop, const std::function<void()>& on_busy = {});
  void Release();

  bool enabled() const { return fd_ >= 0; }
  // Who holds the lock now (from /proc/locks, then /proc/PID/status and
  // comm); nullopt when nobody does, or /proc/locks cannot be read. May run
  // on any thread while another uses the lock.
  std::optional<ProbeLockHolder> Holder(const std::string& proc_root = "/proc") const;
  const std::string& path() const { return path_; }
  // Wall time spent waiting in Acquire, over this object's life.
  std::int64_t waited_ns() const { return waited_ns_; }

 private:
  int fd_ = -1;
  bool held_ = false;
  std::string path_;
  std::int64_t waited_ns_ = 0;
};

// True when the directory that would hold `path` does not exist (an
// initramfs or a slim container without /run/lock). Then no process can hold
// the lock at that path either, so `numaprobe probe` measures without it and
// warns; `serve` refuses to start instead, because a daemon publishes figures
// for months and must not lose exclusion silently: an operator who wants it
// without a lock says so with probe_lock_file: "".
bool LockDirectoryMissing(const std::string& path);

// Holds a ProbeLock for one scope (one probe).
class ProbeLockHold {
 public:
  ProbeLockHold(ProbeLock& lock, const std::atomic<bool>* stop, const std::function<void()>& on_busy)
      : lock_(lock), held_(lock.Acquire(stop, on_busy)) {}
  ~ProbeLockHold() {
    if (held_) lock_.Release();
  }
  ProbeLockHold(const ProbeLockHold&) = delete;
  ProbeLockHold& operator=(const ProbeLockHold&) = delete;
  bool held() const { return held_; }

 private:
  ProbeLock& lock_;
  bool held_;
};

}  // namespace numaprobe::daemon
