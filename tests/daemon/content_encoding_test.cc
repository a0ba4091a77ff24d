// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/web/content_encoding.cc: Accept-Encoding as
// Prometheus and browsers send it, and gzip output that zlib reads back.
#include "daemon/web/content_encoding.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace numaprobe::daemon {
namespace {

// `gzipped` inflated by zlib (gzip wrapper), or "<error>".
std::string Gunzip(const std::string& gzipped) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return "<error>";
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzipped.data()));
  stream.avail_in = static_cast<uInt>(gzipped.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return rc == Z_STREAM_END ? out : "<error>";
}

TEST(AcceptsGzip, AsScrapersAndBrowsersAskForIt) {
  EXPECT_TRUE(AcceptsGzip("gzip"));                               // Prometheus
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));                  // browsers
  EXPECT_TRUE(AcceptsGzip("deflate;q=1.0, GZIP;q=0.5"));          // case-insensitive, any q > 0
  EXPECT_TRUE(AcceptsGzip("x-gzip"));                             // RFC 9110's alias
  EXPECT_TRUE(AcceptsGzip("*"));                                  // anything
  EXPECT_TRUE(AcceptsGzip(" identity ;q=0.5 , gzip ; q=0.001"));  // white space
}

TEST(AcceptsGzip, IdentityWhenNotAskedOrRefused) {
  EXPECT_FALSE(AcceptsGzip(""));  // no header
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("*, gzip;q=0"));  // an explicit gzip entry wins over *
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=abc"));  // malformed q: not accepted
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

TEST(Gzip, RoundTripsThroughZlib) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "numaprobe_latency_seconds{cpu=\"" + std::to_string(i) + "\"} 1.2e-07\n";
  const std::string gzipped = Gzip(text);
  EXPECT_EQ(gzipped.substr(0, 2), "\x1f\x8b");  // gzip magic
  EXPECT_LT(gzipped.size(), text.size() / 5);
  EXPECT_EQ(Gunzip(gzipped), text);
  EXPECT_EQ(Gunzip(Gzip("")), "");
}

}  // namespace
}  // namespace numaprobe::daemon
