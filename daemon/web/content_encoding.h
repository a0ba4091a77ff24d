// SPDX-License-Identifier: Apache-2.0
// Content negotiation for response bodies, as Prometheus' own client
// libraries do it: gzip when the request's Accept-Encoding allows it (every
// Prometheus scrape sends "Accept-Encoding: gzip"), identity otherwise.
#pragma once

#include <string>
#include <string_view>

namespace numaprobe::daemon {

// Whether an Accept-Encoding header value (RFC 9110 12.5.3) accepts gzip: a
// "gzip" (or "x-gzip") or "*" entry whose q-value is not 0. An explicit gzip
// entry wins over "*". Empty (no header): false, identity.
bool AcceptsGzip(std::string_view accept_encoding);

// `body` as one gzip member (RFC 1952), zlib's default level; throws
// std::runtime_error naming zlib's error (it fails only without memory).
std::string Gzip(std::string_view body);

}  // namespace numaprobe::daemon
