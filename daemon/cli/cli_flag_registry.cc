#include "daemon/cli/cli_flag_registry.h"

#include <string>
#include <variant>

#include "daemon/config/config_values.h"

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

void CliFlagRegistry::AddIntList(const std::string& flag, std::vector<int>& value, int min, int max,
                                 const std::string& help) {
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::Range(min, max));
}

void CliFlagRegistry::AddChoices(const std::string& flag, std::vector<std::string>& value,
                                 const std::vector<std::string>& choices, const std::string& help) {
  app_.add_option(flag, value, help)->delimiter(',')->check(CLI::IsMember(choices));
}

}  // namespace numaprobe::daemon
