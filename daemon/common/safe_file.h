// SPDX-License-Identifier: Apache-2.0
// The one way the daemon opens a file that someone else may have put in its
// way (docs/security.md, "Files"): the state file, the config file, the web
// config, the TLS certificate, key and CA files. sysfs and procfs, which only
// the kernel writes, go through kernels/file_read.h.
//
// Reading (ReadLimitedFile, ReadLimitedFileAt):
//  - O_NONBLOCK on open, cleared once the file is known to be regular: a FIFO
//    planted at the path must not block start-up or a SIGHUP until a writer
//    shows up;
//  - fstat after open: only a regular file is read ("it is a FIFO, not a
//    regular file"), never /dev/zero or a directory;
//  - a size cap, named in the error ("larger than the 1 MiB limit"), checked
//    against fstat and again while reading (the file may grow meanwhile);
//  - ReadLimitedFileAt opens relative to a directory descriptor with
//    O_NOFOLLOW: inside a directory another user can write to (the state
//    directory belongs to the daemon's user, whom root's `numaprobe baseline
//    reset` must not trust), a symbolic link is refused, never followed.
//    Operator-named paths (ReadLimitedFile) follow symbolic links: Kubernetes
//    mounts Secrets and ConfigMaps as links.
//
// Creating (CreateNewFileAt): O_CREAT | O_EXCL | O_NOFOLLOW under a name with
// 64 random bits, relative to a directory descriptor: no planted file or
// link at a predictable name can be opened, truncated or chowned instead.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace numaprobe::daemon {

// Closes the descriptor it owns on scope exit.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  int Release();
  // close(2)'s result, for writers that must know the data reached the file.
  int Close();

 private:
  int fd_ = -1;
};

struct FileText {
  std::string text;
  // The errno of a failed open, fstat or read (ENOENT: no such file; EACCES:
  // not readable; ELOOP: a symbolic link where none is followed), or 0 when
  // the file was read or refused for its type or size.
  int error = 0;
  // "" once read; otherwise why not, naming the path: "cannot read
  // /var/lib/numaprobe/state.json: it is a FIFO, not a regular file".
  std::string problem;
  struct stat st {};  // of the file opened (zero if none was)
  bool ok() const { return problem.empty(); }
};

// `path` (symbolic links followed), if it is a regular file of at most `max_bytes`.
FileText ReadLimitedFile(const std::string& path, std::uint64_t max_bytes);
// `name` in the directory `dir_fd`, never through a symbolic link; `shown`
// is the path the messages name.
FileText ReadLimitedFileAt(int dir_fd, const std::string& name, const std::string& shown, std::uint64_t max_bytes);

// What `st` is, for messages: "a FIFO", "a directory", "a symbolic link", ...
std::string FileKindOf(const struct stat& st);
// "1 MiB", "64 KiB", "300 bytes".
std::string ByteLimit(std::uint64_t bytes);

struct NewFile {
  UniqueFd fd;
  std::string name;  // within the directory
  int error = 0;     // errno when fd is not ok
};

// A new, empty file `prefix` + 16 random hex digits in `dir_fd`, opened for
// writing, created by this call (O_EXCL: never an existing file or link).
NewFile CreateNewFileAt(int dir_fd, const std::string& prefix, mode_t mode);

}  // namespace numaprobe::daemon
