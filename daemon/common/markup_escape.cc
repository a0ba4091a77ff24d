// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/markup_escape.h"

#include <cstdint>

namespace numaprobe::daemon {
namespace {

// Length of the valid UTF-8 sequence at s[i] that is also an XML 1.0 Char,
// or 0 if there is none.
std::size_t XmlCharLength(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return lead >= 0x20 || lead == '\t' || lead == '\n' || lead == '\r' ? 1 : 0;
  const std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  std::uint32_t cp = lead & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool valid =
      cp >= min_cp[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF;
  return valid ? n : 0;
}

}  // namespace

std::string EscapeMarkup(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(text.size());
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++chars) {
    if (chars == max_chars) return out + "\u2026";
    const std::size_t n = XmlCharLength(text, i);
    if (n == 0) {
      out += '?';
      ++i;
      continue;
    }
    switch (text[i]) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace numaprobe::daemon
