// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/common/markup_escape.cc, the one escaper of the
// landing page (HTML) and the SVG plot (XML). tests/daemon/http_test.cc and
// tests/daemon/svg_plot_test.cc check the documents it ends up in.
#include "daemon/common/markup_escape.h"

#include <string>

#include <gtest/gtest.h>

namespace numaprobe::daemon {
namespace {

TEST(MarkupEscape, EscapesTheFiveSpecialCharactersForTextAndAttributes) {
  EXPECT_EQ(EscapeMarkup("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(EscapeMarkup("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
}

TEST(MarkupEscape, PlainTextIsUnchanged) {
  EXPECT_EQ(EscapeMarkup(""), "");
  EXPECT_EQ(EscapeMarkup("Intel(R) Xeon(R) CPU @ 2.10GHz\tnode 0\n"), "Intel(R) Xeon(R) CPU @ 2.10GHz\tnode 0\n");
}

TEST(MarkupEscape, ValidUtf8IsKept) {
  const std::string text = "Knoten \xc2\xb5 0 \xe2\x86\x92 1 \xf0\x9f\x93\x88";  // µ, →, 📈
  EXPECT_EQ(EscapeMarkup(text), text);
}

// Bytes no XML document may hold: controls, a stray continuation byte, a
// truncated sequence, an encoded surrogate, U+FFFE, a sequence cut by the end.
TEST(MarkupEscape, BytesXmlCannotHoldBecomeQuestionMarks) {
  EXPECT_EQ(EscapeMarkup(std::string("x\x01y\x1f") + "\x7f"), "x?y?\x7f");  // DEL is an XML Char
  EXPECT_EQ(EscapeMarkup("\xff"), "?");
  EXPECT_EQ(EscapeMarkup("\xc3("), "?(");
  EXPECT_EQ(EscapeMarkup("\xed\xa0\x80"), "???");
  EXPECT_EQ(EscapeMarkup("\xef\xbf\xbe"), "???");
  EXPECT_EQ(EscapeMarkup("a\xe2\x86"), "a??");
  EXPECT_EQ(EscapeMarkup(std::string("\0z", 2)), "?z");
}

TEST(MarkupEscape, CutsAtMaxCharactersCountingACharacterOnceAndEscapingAfter) {
  EXPECT_EQ(EscapeMarkup("abcdef", 3), "abc\xe2\x80\xa6");
  EXPECT_EQ(EscapeMarkup("abc", 3), "abc");  // nothing cut, no ellipsis
  EXPECT_EQ(EscapeMarkup("\xc2\xb5\xc2\xb5\xc2\xb5", 2), "\xc2\xb5\xc2\xb5\xe2\x80\xa6");
  EXPECT_EQ(EscapeMarkup("&&&", 2), "&amp;&amp;\xe2\x80\xa6");
}

}  // namespace
}  // namespace numaprobe::daemon
