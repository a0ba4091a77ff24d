// SPDX-License-Identifier: Apache-2.0
// Replacing a whole file so that a reader sees the old one or the new one,
// never half: the daemon's state file (serve/state.h) and the Node Feature
// Discovery feature file (serve/node_feature_export.h). Everything inside the
// directory goes through its descriptor (docs/security.md, "Files"): the temp
// file is created under a random name (O_EXCL, no link followed), so nothing
// planted in the directory is ever written, truncated or chowned, and the
// rename replaces whatever holds the final name without following it.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "daemon/common/safe_file.h"

namespace numaprobe::daemon {

struct ReplaceOptions {
  mode_t mode = 0600;                   // of the new file
  bool create_directory = false;        // mkdir 0700 when missing (the state directory); else missing is an error
  std::string_view what = "directory";  // how messages name the directory: "state directory"
};

// Writes `content` to ".<name>.tmp.<pid>.<random>" in `dir`, fsyncs it,
// renames it to `name` and fsyncs the directory, so that the rename itself
// survives a power loss; then removes the temp files of writers that died
// between create and rename. Temp names start with a dot: readers that skip
// hidden files (NFD's worker) never see one. "" on success, else an error
// naming the path and errno ("cannot write /x/.n.tmp.12.ab: No space left on device").
std::string ReplaceFileAtomically(const std::string& dir, const std::string& name, const std::string& content,
                                  const ReplaceOptions& options);

// The directory itself, symbolic links followed (the operator named it:
// systemd's StateDirectory with DynamicUser is a link into /var/lib/private).
UniqueFd OpenDirectory(const std::string& dir);
// The names in the directory `dir_fd` that start with `prefix`.
std::vector<std::string> NamesWithPrefix(int dir_fd, std::string_view prefix);

}  // namespace numaprobe::daemon
