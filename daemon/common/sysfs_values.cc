// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/sysfs_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "kernels/file_read.h"

namespace numaprobe::daemon {

std::vector<int> NumberedEntries(const std::string& directory, const std::string& prefix) {
  std::vector<int> ids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    int id = -1;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    const auto [end, ec] = std::from_chars(first, last, id);
    if (ec == std::errc() && end == last && id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<unsigned long long> ReadNumber(const std::string& path) {
  const std::string text = kernels::ReadFirstLine(path);
  unsigned long long value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  while (last > first && std::isspace(static_cast<unsigned char>(last[-1]))) --last;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || end != last) return std::nullopt;
  return value;
}

std::string BracketedChoice(const std::string& line) {
  const auto open = line.find('[');
  const auto close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(open + 1, close - open - 1);
}

}  // namespace numaprobe::daemon
