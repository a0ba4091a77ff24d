// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/state_storage.h"

namespace numaprobe::daemon {
namespace {

class Directory final : public StateStorage {
 public:
  explicit Directory(std::string dir) : dir_(std::move(dir)) {}
  std::string Where() const override { return dir_; }
  StoredText Read(const std::string& name) override { return ReadStateFile(dir_, name); }
  std::string Write(const std::string& name, const std::string& text) override {
    return WriteStateFile(dir_, name, text);
  }
  std::string Remove(const std::string& name) override { return RemoveStateFile(dir_, name); }
  std::string KeepCorrupt(const std::string& name, const std::string& utc_stamp) override {
    return KeepCorruptCopy(dir_, name, utc_stamp);
  }

 private:
  std::string dir_;
};

class Memory final : public StateStorage {
 public:
  explicit Memory(std::shared_ptr<std::map<std::string, std::string>> files) : files_(std::move(files)) {}
  std::string Where() const override { return "memory"; }
  StoredText Read(const std::string& name) override {
    const auto it = files_->find(name);
    if (it == files_->end()) return {};
    return {StoredText::Status::kOk, it->second, ""};
  }
  std::string Write(const std::string& name, const std::string& text) override {
    (*files_)[name] = text;
    return "";
  }
  std::string Remove(const std::string& name) override {
    files_->erase(name);
    return "";
  }
  std::string KeepCorrupt(const std::string& name, const std::string& utc_stamp) override {
    if (const auto it = files_->find(name); it != files_->end()) {
      (*files_)[name + ".corrupt-" + utc_stamp] = it->second;
      files_->erase(it);
    }
    return "";
  }

 private:
  std::shared_ptr<std::map<std::string, std::string>> files_;
};

}  // namespace

std::unique_ptr<StateStorage> DirectoryStorage(std::string state_directory) {
  return std::make_unique<Directory>(std::move(state_directory));
}

std::unique_ptr<StateStorage> MemoryStorage(std::shared_ptr<std::map<std::string, std::string>> files) {
  return std::make_unique<Memory>(std::move(files));
}

}  // namespace numaprobe::daemon
