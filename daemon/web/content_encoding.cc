// SPDX-License-Identifier: Apache-2.0
#include "daemon/web/content_encoding.h"

#include <strings.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace numaprobe::daemon {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// The q-value of one entry's parameters ("q=0.5"); 1 without one. A malformed
// q-value counts as 0: never send what the client may not have asked for.
double QValue(std::string_view parameters) {
  while (!parameters.empty()) {
    const std::size_t semicolon = parameters.find(';');
    const std::string_view parameter = Trim(parameters.substr(0, semicolon));
    parameters = semicolon == std::string_view::npos ? std::string_view() : parameters.substr(semicolon + 1);
    if (parameter.size() < 2 || (parameter[0] != 'q' && parameter[0] != 'Q') || parameter[1] != '=') continue;
    const std::string value(Trim(parameter.substr(2)));
    char* end = nullptr;
    const double q = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || q < 0 || q > 1) return 0;
    return q;
  }
  return 1;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  double gzip = -1;  // -1: not named
  double any = -1;
  while (!accept_encoding.empty()) {
    const std::size_t comma = accept_encoding.find(',');
    const std::string_view entry = accept_encoding.substr(0, comma);
    accept_encoding = comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    const std::size_t semicolon = entry.find(';');
    const std::string_view coding = Trim(entry.substr(0, semicolon));
    const double q = semicolon == std::string_view::npos ? 1 : QValue(entry.substr(semicolon + 1));
    if (EqualsNoCase(coding, "gzip") || EqualsNoCase(coding, "x-gzip")) gzip = std::max(gzip, q);
    if (coding == "*") any = std::max(any, q);
  }
  return gzip >= 0 ? gzip > 0 : any > 0;
}

std::string Gzip(std::string_view body) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  constexpr int kGzipWindowBits = 15 + 16;
  constexpr int kMemLevel = 8;
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error(std::string("gzip: deflateInit2: ") + (stream.msg != nullptr ? stream.msg : "failed"));
  }
  std::string out(deflateBound(&stream, body.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);  // deflateBound: one call is enough
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish (" + std::to_string(rc) + ")");
  return out;
}

}  // namespace numaprobe::daemon
