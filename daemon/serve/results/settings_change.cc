// SPDX-License-Identifier: Apache-2.0
#include "daemon/serve/results/settings_change.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <string_view>

namespace numaprobe::daemon {

namespace {

// "a=1;b=2" -> {a: 1, b: 2}; a part without '=' is a key of its own (older
// state files joined parts with ';;' where a kind had none).
std::map<std::string, std::string> Parts(std::string_view text) {
  std::map<std::string, std::string> parts;
  while (!text.empty()) {
    const auto end = text.find(';');
    const std::string_view part = text.substr(0, end);
    if (!part.empty()) {
      const auto eq = part.find('=');
      parts[std::string(part.substr(0, eq))] = eq == std::string_view::npos ? "" : std::string(part.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return parts;
}

}  // namespace

std::string SettingsChange::Describe() const { return fmt::format("{}", fmt::join(keys, ", ")); }

std::vector<SettingsChange> SettingsChanges(const std::map<std::string, std::string>& recorded,
                                            const std::map<std::string, std::string>& now) {
  std::vector<SettingsChange> changes;
  for (const auto& [kind, settings] : now) {
    const auto before = recorded.find(kind);
    if (before == recorded.end() || before->second == settings) continue;
    const auto old_parts = Parts(before->second);
    const auto new_parts = Parts(settings);
    std::set<std::string> keys;
    for (const auto& [key, value] : old_parts) keys.insert(key);
    for (const auto& [key, value] : new_parts) keys.insert(key);
    SettingsChange change{kind, {}};
    for (const std::string& key : keys) {
      const auto o = old_parts.find(key);
      const auto n = new_parts.find(key);
      const std::string from = o == old_parts.end() ? "(none)" : o->second;
      const std::string to = n == new_parts.end() ? "(none)" : n->second;
      if (from != to) change.keys.push_back(fmt::format("{} {} -> {}", key, from, to));
    }
    // The same keys and values written differently: say the texts.
    if (change.keys.empty()) change.keys.push_back(fmt::format("settings {} -> {}", before->second, settings));
    changes.push_back(std::move(change));
  }
  return changes;
}

}  // namespace numaprobe::daemon
