// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/atomic_replace.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace numaprobe::daemon {
namespace {

std::string DirEntryPath(const std::string& dir, const std::string& name) { return fmt::format("{}/{}", dir, name); }
std::string SystemError(int error) { return std::strerror(error); }

}  // namespace

// The directory's own path is the operator's and followed; what is inside it
// is opened relative to this descriptor, never followed: root's `numaprobe
// baseline reset` must not write through a link the state directory's owner
// planted.
UniqueFd OpenDirectory(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::vector<std::string> NamesWithPrefix(int dir_fd, std::string_view prefix) {
  std::vector<std::string> names;
  const int listing_fd = ::dup(dir_fd);
  if (listing_fd < 0) return names;
  DIR* listing = ::fdopendir(listing_fd);
  if (listing == nullptr) {
    ::close(listing_fd);
    return names;
  }
  ::rewinddir(listing);
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name(entry->d_name);
    if (name.substr(0, prefix.size()) == prefix) names.emplace_back(name);
  }
  ::closedir(listing);
  return names;
}

namespace {

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// A writer killed between creating its temp file and the rename (SIGKILL,
// power loss) leaves ".<name>.tmp.<pid>.<random>" behind (or, from an older
// numaprobe, ".<name>.tmp.<pid>"). Once a write has succeeded, temp files of
// processes that no longer exist are removed; a live writer's (a concurrent
// `numaprobe baseline accept`) is left alone. unlinkat removes the name,
// whatever it is: nothing is followed.
void RemoveStaleTempFiles(int dir_fd, const std::string& name) {
  const std::string prefix = fmt::format(".{}.tmp.", name);
  for (const std::string& file : NamesWithPrefix(dir_fd, prefix)) {
    const std::string rest = file.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end == rest.c_str() || (*end != '\0' && *end != '.') || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::unlinkat(dir_fd, file.c_str(), 0);
  }
}

}  // namespace

// Rename is atomic only within a file system, hence the temp file in `dir`.
// The state directory's owner may be another user than the writer (root's
// `numaprobe baseline reset`): the new file belongs to the directory's owner.
std::string ReplaceFileAtomically(const std::string& dir, const std::string& name, const std::string& content,
                                  const ReplaceOptions& options) {
  if (options.create_directory && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fmt::format("cannot create {} {}: {}", options.what, dir, SystemError(errno));
  }
  UniqueFd dir_fd = OpenDirectory(dir);
  if (!dir_fd.ok()) return fmt::format("cannot open {} {}: {}", options.what, dir, SystemError(errno));

  const std::string prefix = fmt::format(".{}.tmp.{}.", name, ::getpid());
  NewFile temp = CreateNewFileAt(dir_fd.get(), prefix, options.mode);
  if (!temp.fd.ok()) {
    return fmt::format("cannot create a temporary file {}/{}*: {}", dir, prefix, SystemError(temp.error));
  }
  const std::string temp_path = DirEntryPath(dir, temp.name);
  const auto fail = [&](std::string_view what) {
    const int error = errno;  // before unlinkat() can overwrite it
    ::unlinkat(dir_fd.get(), temp.name.c_str(), 0);
    return fmt::format("cannot {} {}: {}", what, temp_path, SystemError(error));
  };
  // `sudo numaprobe baseline reset` must not leave a root-owned 0600 file that
  // a daemon running as its own user can no longer read: the file belongs to
  // whoever owns the state directory. Only the file this call created, by
  // its descriptor.
  struct stat dir_stat {};
  if (::geteuid() == 0 && ::fstat(dir_fd.get(), &dir_stat) == 0 && dir_stat.st_uid != 0 &&
      ::fchown(temp.fd.get(), dir_stat.st_uid, dir_stat.st_gid) != 0) {
    return fail("chown");
  }
  if (!WriteAll(temp.fd.get(), content)) return fail("write");
  if (::fsync(temp.fd.get()) != 0) return fail("fsync");
  if (temp.fd.Close() != 0) return fail("close");
  if (::renameat(dir_fd.get(), temp.name.c_str(), dir_fd.get(), name.c_str()) != 0) {
    return fail(fmt::format("rename to {}", DirEntryPath(dir, name)));
  }
  if (::fsync(dir_fd.get()) != 0) return fmt::format("cannot fsync {} {}: {}", options.what, dir, SystemError(errno));
  RemoveStaleTempFiles(dir_fd.get(), name);
  return "";
}

}  // namespace numaprobe::daemon
