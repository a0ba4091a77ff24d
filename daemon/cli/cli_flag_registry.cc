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

namespace {

// A setting's option: sizes are written as in the configuration file, and
// the value is checked by the declaration (range, then rule) with the same
// words as the configuration's error. The help names the key.
template <class T>
void AddSettingOption(CLI::App& app, std::string_view kind, const KindSetting& setting, T& value) {
  std::string help(setting.help);
  if (!setting.key.empty()) help += " (probes." + std::string(kind) + "." + std::string(setting.key) + ")";
  CLI::Option* option = app.add_option(std::string(setting.flag), value, help);
  // The default as the configuration file writes it (256MiB, not 268435456);
  // none for a value outside the setting's range, which stands for "not
  // given" (--threads 0: every CPU, as the help says).
  const auto given = static_cast<std::int64_t>(value);
  const bool in_range = given >= setting.min && given <= setting.max;
  option->default_str(!in_range       ? ""
                      : setting.bytes ? FormatSize(static_cast<std::uint64_t>(value))
                                      : std::to_string(value));
  if (setting.bytes) option->transform(SizeFlag());
  option->check(CLI::Validator(
      [setting](std::string& text) -> std::string {
        auto parsed = ParseInteger(text);
        if (const auto* error = std::get_if<std::string>(&parsed)) return *error;
        const std::int64_t v = std::get<std::int64_t>(parsed);
        return setting.Problem(v, setting.bytes ? FormatSize(static_cast<std::uint64_t>(v)) : text);
      },
      setting.RangeText()));
}

}  // namespace

void CliFlagRegistry::AddSetting(std::string_view kind, const KindSetting& setting, int& value) {
  AddSettingOption(app_, kind, setting, value);
}

void CliFlagRegistry::AddSetting(std::string_view kind, const KindSetting& setting, std::uint64_t& value) {
  AddSettingOption(app_, kind, setting, value);
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
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::Range(min, max))->default_str(ListDefault(value));
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
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::IsMember(choices))->default_str(ListDefault(value));
}

}  // namespace numaprobe::daemon
