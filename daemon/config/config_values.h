// SPDX-License-Identifier: Apache-2.0
// The scalar value syntaxes of numaprobe's config file, parsed from plain text
// (no YAML here, so they are tested on strings): sizes ("256MiB"), durations
// ("5m", "1h30m"), integers and numbers, and the "did you mean" suggestion for
// a misspelt key. Each parser returns the value or a message saying what was
// expected; the caller adds the key and the line.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace numaprobe::daemon {

// A parsed value, or why the text is not one ("expected a size such as ...").
template <class T>
using ParsedValue = std::variant<T, std::string>;

// Bytes: a plain integer ("1073741824") or an integer with a unit. KiB, MiB,
// GiB, TiB are powers of 1024; KB, MB, GB, TB powers of 1000 (as on a disk
// label); B is bytes. No fractions ("1.5GiB") and no bare "M" or "G": which
// base they meant is a guess, and a 5% error in a buffer size is not harmless.
ParsedValue<std::uint64_t> ParseSize(std::string_view text);

// A Prometheus-style duration: one or more <integer><unit> terms, units in
// decreasing order, each at most once: y (365d), w, d, h, m, s, ms. "0" alone
// is zero. Examples: "300ms", "30s", "5m", "1h30m".
ParsedValue<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The shortest exact spelling in the syntaxes above, for messages and for
// echoing settings: 16777216 -> "16MiB", 90000ms -> "1m30s".
std::string FormatSize(std::uint64_t bytes);
std::string FormatDuration(std::chrono::milliseconds duration);

// A whole decimal integer, optionally signed; no fractions or exponents.
ParsedValue<std::int64_t> ParseInteger(std::string_view text);

// A finite decimal number ("0.002", "2e-3", "1").
ParsedValue<double> ParseNumber(std::string_view text);

// YAML 1.2 core booleans: true/false (also True/TRUE, False/FALSE). yes/no
// and on/off are refused: YAML 1.1 and 1.2 disagree on them.
ParsedValue<bool> ParseBool(std::string_view text);

// The known name an unknown one most likely meant, if any is close enough: a
// small edit distance ("strde_bytes"), or one being a prefix of the other
// ("strid" -> "stride_bytes"), or a long common prefix ("buffer_bytes" ->
// "buffer_size"). Dashes count as underscores and case is ignored.
std::optional<std::string> ClosestName(std::string_view unknown, const std::vector<std::string_view>& known);

}  // namespace numaprobe::daemon
