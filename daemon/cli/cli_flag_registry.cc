// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli/cli_flag_registry.h"

#include <string>
#include <variant>

#include "daemon/config/config_values.h"
#include "kernels/cpulist.h"

namespace numaprobe::daemon {

CLI::Validator SizeFlag() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto parsed = ParseSize(text);
        if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
        text = std::to_string(std::get<std::uint64_t>(parsed));
        return "";
      },
      "SIZE");
}

void CliFlagRegistry::AddInt(const std::string& flag, int& value, int min, int max, const std::string& help) {
  app_.add_option(flag, value, help)->check(CLI::Range(min, max));
}

void CliFlagRegistry::AddCount(const std::string& flag, std::uint64_t& value, std::uint64_t min, std::uint64_t max,
                               const std::string& help) {
  app_.add_option(flag, value, help)->check(CLI::Range(min, max));
}

void CliFlagRegistry::AddSize(const std::string& flag, std::size_t& value, const std::string& help) {
  app_.add_option(flag, value, help)->transform(SizeFlag());
}

void CliFlagRegistry::AddCountChoice(const std::string& flag, std::size_t& value,
                                     const std::vector<std::size_t>& allowed, const std::string& help) {
  app_.add_option(flag, value, help)->check(CLI::IsMember(allowed));
}

// ENUM, as CLI11 calls an option of an enum type: the help reads the same as
// for a flag bound to the enum itself.
void CliFlagRegistry::AddEnum(const std::string& flag, const std::map<std::string, int>& by_name,
                              std::function<void(int)> store, const std::string& help) {
  app_.add_option_function<int>(flag, std::move(store), help)
      ->transform(CLI::CheckedTransformer(by_name, CLI::ignore_case))
      ->type_name("ENUM");
}

void CliFlagRegistry::AddEnumList(const std::string& flag, const std::map<std::string, int>& by_name,
                                  std::function<void(const std::vector<int>&)> store, const std::string& help) {
  app_.add_option_function<std::vector<int>>(flag, std::move(store), help)
      ->delimiter(',')
      ->transform(CLI::CheckedTransformer(by_name, CLI::ignore_case))
      ->type_name("ENUM");
}

void CliFlagRegistry::AddIntList(const std::string& flag, std::vector<int>& value, int min, int max,
                                 const std::string& help) {
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::Range(min, max));
}

// Checked as CLI11 parses, so a malformed list is a usage error naming the flag.
void CliFlagRegistry::AddCpuList(const std::string& flag, std::function<void(std::vector<int>)> store,
                                 const std::string& help) {
  const CLI::Validator list(
      [](std::string& text) {
        auto parsed = kernels::ParseCpuList(text);
        return parsed.ok() ? std::string() : parsed.failure().reason;
      },
      "");
  app_.add_option_function<std::string>(
          flag, [store = std::move(store)](const std::string& text) { store(kernels::ParseCpuList(text).value()); },
          help)
      ->check(list)
      ->type_name("LIST");
}

void CliFlagRegistry::AddChoices(const std::string& flag, std::vector<std::string>& value,
                                 const std::vector<std::string>& choices, const std::string& help) {
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::IsMember(choices));
}

}  // namespace numaprobe::daemon
