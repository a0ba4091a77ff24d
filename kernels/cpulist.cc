// SPDX-License-Identifier: Apache-2.0
#include "kernels/cpulist.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace numaprobe::kernels {
namespace {

// Ids beyond this are surely a typo; also bounds the size of a range.
constexpr int kMaxId = 1 << 16;

bool ParseId(std::string_view s, int& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0 && out < kMaxId;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Expected<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> ids;
  text = Trim(text);
  if (text.empty()) return ids;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view token = Trim(text.substr(0, comma));
    const auto dash = token.find('-');
    int lo = 0;
    int hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseId(token, lo) && ParseId(token, hi)
                        : ParseId(token.substr(0, dash), lo) && ParseId(token.substr(dash + 1), hi);
    if (!ok || lo > hi) {
      return Failure{Outcome::kInvalidSpec, "invalid list element '" + std::string(token) + "' (expected e.g. 0-3,8)"};
    }
    for (int id = lo; id <= hi; ++id) ids.push_back(id);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string FormatCpuList(const std::vector<int>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace numaprobe::kernels
