// SPDX-License-Identifier: Apache-2.0
// FlagRegistry over CLI11: how probe kinds add their own options to
// `numaprobe probe` without depending on the CLI library.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "daemon/probing/probe_kind.h"

namespace numaprobe::daemon {

class CliFlagRegistry final : public FlagRegistry {
 public:
  explicit CliFlagRegistry(CLI::App& app) : app_(app) {}
  void AddSetting(std::string_view kind, const KindSetting& setting, int& value) override;
  void AddSetting(std::string_view kind, const KindSetting& setting, std::uint64_t& value) override;
  void AddEnum(const std::string& flag, const std::map<std::string, int>& by_name, std::function<void(int)> store,
               const std::string& help) override;
  void AddEnumList(const std::string& flag, const std::map<std::string, int>& by_name,
                   std::function<void(const std::vector<int>&)> store, const std::string& help) override;
  void AddIntList(const std::string& flag, std::vector<int>& value, int min, int max, const std::string& help) override;
  void AddCpuList(const std::string& flag, std::function<void(std::vector<int>)> store,
                  const std::string& help) override;
  void AddChoices(const std::string& flag, std::vector<std::string>& value, const std::vector<std::string>& choices,
                  const std::string& help) override;

 private:
  CLI::App& app_;
};

// Sizes written as in the configuration file (256MiB, 1GiB, 64MB for powers
// of 1000; no bare "M"): one syntax, so a value can be copied between them.
CLI::Validator SizeFlag();

// A list option's default as it is typed ("latency,bandwidth"), for --help;
// "" (none shown) for an empty list, whose help says what it means.
template <class T>
std::string ListDefault(const std::vector<T>& values) {
  std::vector<std::string> texts;
  for (const T& v : values) texts.push_back(CLI::detail::to_string(v));
  return CLI::detail::join(texts, ",");
}

}  // namespace numaprobe::daemon
