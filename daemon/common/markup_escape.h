// SPDX-License-Identifier: Apache-2.0
// Text made safe for HTML and XML (the landing page, the SVG plot): any string
// (a CPU model, a label, a curve's name) is inert in element text and in
// attribute values. & < > " ' become entities (' as &#39;, which HTML 4,
// HTML 5 and XML all read), and what an XML document cannot hold at all
// (control characters, broken UTF-8, surrogates) becomes '?', so the page and
// the plot stay well-formed; valid UTF-8 is kept.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace numaprobe::daemon {

// `text` escaped. At most `max_chars` characters are kept (counted before
// escaping, a multi-byte character as one); a cut text ends in an ellipsis.
std::string EscapeMarkup(std::string_view text, std::size_t max_chars = std::numeric_limits<std::size_t>::max());

}  // namespace numaprobe::daemon
