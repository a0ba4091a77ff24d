// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace numaprobe::daemon {
namespace {

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};

constexpr std::uint64_t kKi = 1024;
constexpr std::uint64_t kK = 1000;
constexpr Unit kSizeUnits[] = {
    {"B", 1},   {"KiB", kKi},   {"MiB", kKi* kKi},  {"GiB", kKi* kKi* kKi}, {"TiB", kKi* kKi* kKi* kKi},
    {"KB", kK}, {"MB", kK* kK}, {"GB", kK* kK* kK}, {"TB", kK* kK* kK* kK},
};

// In the order terms must be written: decreasing.
constexpr std::uint64_t kMsPerSecond = 1000;
constexpr std::uint64_t kMsPerDay = 24 * 3600 * kMsPerSecond;
constexpr Unit kDurationUnits[] = {
    {"y", 365 * kMsPerDay},   {"w", 7 * kMsPerDay}, {"d", kMsPerDay}, {"h", 3600 * kMsPerSecond},
    {"m", 60 * kMsPerSecond}, {"s", kMsPerSecond},  {"ms", 1},
};

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// Splits off the leading decimal digits of `text`.
bool TakeDigits(std::string_view& text, std::uint64_t& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
  return true;
}

std::string Normalised(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::size_t CommonPrefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

ParsedValue<std::uint64_t> ParseSize(std::string_view text) {
  const std::string expected = "expected a size such as 256MiB, 1GiB or 1073741824, got " + Quoted(text);
  std::string_view rest = text;
  std::uint64_t number = 0;
  if (!TakeDigits(rest, number)) return expected;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return number;
  for (const Unit& unit : kSizeUnits) {
    if (rest != unit.name) continue;
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(number, unit.factor, &bytes)) return Quoted(text) + " is too large";
    return bytes;
  }
  return expected + " (units: B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB for powers of 1000)";
}

ParsedValue<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const std::string expected = "expected a duration such as 300ms, 30s, 5m or 1h30m, got " + Quoted(text);
  if (text == "0") return std::chrono::milliseconds{0};
  if (text.empty()) return expected;
  std::string_view rest = text;
  std::uint64_t total_ms = 0;
  std::uint64_t last_factor = std::numeric_limits<std::uint64_t>::max();
  while (!rest.empty()) {
    std::uint64_t number = 0;
    if (!TakeDigits(rest, number)) return expected;
    const Unit* matched = nullptr;
    for (const Unit& unit : kDurationUnits) {  // the longest match: "ms", not "m"
      if (rest.substr(0, unit.name.size()) == unit.name &&
          (matched == nullptr || unit.name.size() > matched->name.size())) {
        matched = &unit;
      }
    }
    if (matched == nullptr) return expected;
    rest.remove_prefix(matched->name.size());
    // "30s5m" and "5m5m" are almost certainly mistakes; Prometheus refuses them too.
    if (matched->factor >= last_factor) return expected + " (units must decrease: 1h30m, not 30m1h)";
    last_factor = matched->factor;
    std::uint64_t term = 0;
    if (__builtin_mul_overflow(number, matched->factor, &term) || __builtin_add_overflow(total_ms, term, &total_ms) ||
        total_ms > static_cast<std::uint64_t>(std::numeric_limits<std::chrono::milliseconds::rep>::max())) {
      return Quoted(text) + " is too long";
    }
  }
  return std::chrono::milliseconds{static_cast<std::chrono::milliseconds::rep>(total_ms)};
}

std::string FormatSize(std::uint64_t bytes) {
  // Binary units only: every size numaprobe uses is a power-of-two multiple.
  constexpr std::string_view kBinary[] = {"TiB", "GiB", "MiB", "KiB"};
  std::uint64_t factor = kKi * kKi * kKi * kKi;
  for (std::string_view unit : kBinary) {
    if (bytes != 0 && bytes % factor == 0) return std::to_string(bytes / factor) + std::string(unit);
    factor /= kKi;
  }
  return std::to_string(bytes);
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  if (duration.count() <= 0) return duration.count() == 0 ? "0s" : std::to_string(duration.count()) + "ms";
  std::uint64_t rest = static_cast<std::uint64_t>(duration.count());
  std::string out;
  // Days and larger read worse than hours for the intervals used here.
  for (const Unit& unit : kDurationUnits) {
    if (unit.factor > 3600 * kMsPerSecond || rest < unit.factor) continue;
    out += std::to_string(rest / unit.factor) + std::string(unit.name);
    rest %= unit.factor;
  }
  return out;
}

ParsedValue<std::int64_t> ParseInteger(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);  // from_chars refuses '+'
  std::int64_t value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec == std::errc::result_out_of_range) return Quoted(text) + " is too large";
  if (ec != std::errc() || ptr != end || digits.empty()) return "expected an integer, got " + Quoted(text);
  return value;
}

ParsedValue<double> ParseNumber(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value, std::chars_format::general);
  // from_chars also reads "inf" and "nan", which no setting can use.
  if (ec != std::errc() || ptr != end || digits.empty() || !std::isfinite(value)) {
    return "expected a number, got " + Quoted(text);
  }
  return value;
}

ParsedValue<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return "expected true or false, got " + Quoted(text);
}

std::optional<std::string> ClosestName(std::string_view unknown, const std::vector<std::string_view>& known) {
  const std::string wrong = Normalised(unknown);
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : known) {
    const std::string right = Normalised(candidate);
    const std::size_t distance = EditDistance(wrong, right);
    const std::size_t shorter = std::min(wrong.size(), right.size());
    const std::size_t prefix = CommonPrefix(wrong, right);
    const bool close = distance <= std::max<std::size_t>(2, wrong.size() / 3) || (shorter >= 3 && prefix == shorter) ||
                       (prefix >= 4 && 2 * prefix >= shorter);
    if (close && distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace numaprobe::daemon
