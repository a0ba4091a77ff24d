// SPDX-License-Identifier: Apache-2.0
// Where the ResultModel keeps its files: the state directory on the host, or
// memory (the sizing preview runs days of schedule on a simulated clock and
// must not write a file a second). The model names the files
// (results/state_file.h); the storage only reads, writes and removes them.
//
// Thread safety: not thread-safe; used by the scheduler loop only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "daemon/serve/state.h"

namespace numaprobe::daemon {

class StateStorage {
 public:
  virtual ~StateStorage() = default;
  // For people: the directory, "memory".
  virtual std::string Where() const = 0;
  virtual StoredText Read(const std::string& name) = 0;
  // "" on success, else an error naming the path.
  virtual std::string Write(const std::string& name, const std::string& text) = 0;
  virtual std::string Remove(const std::string& name) = 0;
  // Keeps a corrupt file for the operator before it is replaced.
  virtual std::string KeepCorrupt(const std::string& name, const std::string& utc_stamp) = 0;
};

std::unique_ptr<StateStorage> DirectoryStorage(std::string state_directory);
// Files in `files`, which outlives the storage and survives a simulated restart.
std::unique_ptr<StateStorage> MemoryStorage(std::shared_ptr<std::map<std::string, std::string>> files);

}  // namespace numaprobe::daemon
