// Unit tests for daemon/config/web_config.cc (the --web.config.file parser),
// daemon/web/web_security.cc (basic auth) and the file checks of
// daemon/web/tls_options.cc (serving TLS: tests/integration/test_web_tls.py).
#include "daemon/config/web_config.h"
#include "daemon/web/tls_options.h"
#include "daemon/web/web_security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace numaprobe::daemon {
namespace {

using ::testing::HasSubstr;

// "secret", bcrypt $2y$ cost 10 (libxcrypt).
constexpr const char* kSecretHash = "$2y$10$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O";

WebConfig ParsedWeb(const std::string& text) {
  WebConfigResult r = ParseWebConfig(text);
  if (auto* errors = std::get_if<std::vector<ConfigError>>(&r)) {
    ADD_FAILURE() << text << " -> " << errors->front().ToString();
    return {};
  }
  return std::get<WebConfig>(r);
}

std::string FirstError(const std::string& text) {
  WebConfigResult r = ParseWebConfig(text);
  auto* errors = std::get_if<std::vector<ConfigError>>(&r);
  if (errors == nullptr || errors->empty()) return "(no error)";
  return errors->front().ToString();
}

TEST(WebConfig, EmptyIsPlainHttpWithoutAuth) {
  EXPECT_EQ(ParsedWeb(""), WebConfig{});
  EXPECT_EQ(ParsedWeb("# comment only\n"), WebConfig{});
}

TEST(WebConfig, EachSectionAlone) {
  EXPECT_TRUE(ParsedWeb("tls_server_config:\n  cert_file: c\n  key_file: k\n").tls.has_value());
  EXPECT_EQ(ParsedWeb(std::string("basic_auth_users:\n  alice: ") + kSecretHash + "\n").basic_auth_users.size(), 1u);
  EXPECT_EQ(ParsedWeb("http_server_config:\n  http2: true\n").headers.size(), 0u);
}

TEST(WebConfig, ReadsTheExporterToolkitKeys) {
  const WebConfig c = ParsedWeb(std::string("tls_server_config:\n  cert_file: /c.pem\n  key_file: /k.pem\n"
                                            "  client_auth_type: RequireAndVerifyClientCert\n"
                                            "  client_ca_file: /ca.pem\n  min_version: TLS13\n"
                                            "http_server_config:\n  http2: false\n  headers:\n"
                                            "    strict-transport-security: max-age=31536000\n"
                                            "basic_auth_users:\n  alice: ") +
                                kSecretHash + "\n");
  ASSERT_TRUE(c.tls.has_value());
  EXPECT_EQ(c.tls->cert_file, "/c.pem");
  EXPECT_EQ(c.tls->client_auth, WebConfig::ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(c.tls->min_version, WebConfig::TlsVersion::kTls13);
  ASSERT_EQ(c.headers.size(), 1u);
  EXPECT_EQ(c.headers[0].first, "Strict-Transport-Security");  // canonical spelling
  EXPECT_EQ(c.basic_auth_users.at("alice"), kSecretHash);
}

TEST(WebConfig, ReadsTheTlsNamesAsGiven) {
  const auto result = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: ca\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n"
      "  curve_preferences: [X25519, CurveP256]\n  prefer_server_cipher_suites: false\n"
      "  client_allowed_sans: [scraper.example, 10.0.0.1]\n");
  ASSERT_TRUE(std::holds_alternative<WebConfig>(result));
  const WebConfig::Tls& tls = *std::get<WebConfig>(result).tls;
  EXPECT_EQ(tls.cipher_suites, std::vector<std::string>{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"});
  EXPECT_EQ(tls.curve_preferences, (std::vector<std::string>{"X25519", "CurveP256"}));
  EXPECT_FALSE(tls.prefer_server_cipher_suites);
  EXPECT_EQ(tls.client_allowed_sans, (std::vector<std::string>{"scraper.example", "10.0.0.1"}));
}

TEST(WebConfig, ErrorsNameTheKey) {
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert: inline\n"),
              HasSubstr("tls_server_config.cert: not supported"));
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: TLS_X\n"),
              HasSubstr("tls_server_config.cipher_suites: expected a list of strings"));
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_allowed_sans: [x]\n"),
              HasSubstr("tls_server_config.client_allowed_sans: needs a verified client certificate"));
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n  key_file: b\n  bogus: 1\n"),
              HasSubstr("tls_server_config.bogus"));
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n"),
              HasSubstr("tls_server_config.min_version"));
  EXPECT_THAT(FirstError("tls_server_config:\n  cert_file: a\n"), HasSubstr("tls_server_config.key_file"));
  EXPECT_THAT(FirstError("basic_auth_users:\n  alice: '$2y$10$short'\n"), HasSubstr("basic_auth_users.alice"));
  EXPECT_THAT(FirstError("http_server_config:\n  headers:\n    Set-Cookie: a\n"),
              HasSubstr("http_server_config.headers.Set-Cookie"));
  EXPECT_THAT(FirstError("rate_limit:\n  burst: 2\n"), HasSubstr("rate_limit"));
  EXPECT_THAT(FirstError("basic_auth_users: {a: [1]}\n"), HasSubstr("basic_auth_users.a"));
  EXPECT_THAT(FirstError("[1, 2"), HasSubstr("invalid YAML"));
  EXPECT_THAT(FirstError("a: 1\n---\nb: 2\n"), HasSubstr("one YAML document"));
  EXPECT_THAT(FirstError(","), HasSubstr("invalid YAML"));  // yaml-cpp 0.7 LoadAll looped forever (fuzz_config)
}

std::string Header(const std::string& credentials) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < credentials.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(credentials[i]) << 16) |
                       (static_cast<unsigned char>(credentials[i + 1]) << 8) |
                       static_cast<unsigned char>(credentials[i + 2]);
    for (int s : {18, 12, 6, 0}) out += table[(v >> s) & 63];
  }
  if (credentials.size() - i == 1) {
    const unsigned v = static_cast<unsigned char>(credentials[i]) << 16;
    out += std::string{table[(v >> 18) & 63], table[(v >> 12) & 63], '=', '='};
  } else if (credentials.size() - i == 2) {
    const unsigned v =
        (static_cast<unsigned char>(credentials[i]) << 16) | (static_cast<unsigned char>(credentials[i + 1]) << 8);
    out += std::string{table[(v >> 18) & 63], table[(v >> 12) & 63], table[(v >> 6) & 63], '='};
  }
  return "Basic " + out;
}

TEST(BasicAuth, AcceptsOnlyTheRightPassword) {
  const BasicAuth auth(std::map<std::string, std::string>{{"alice", kSecretHash}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.Allows(Header("alice:secret").c_str()));
  EXPECT_TRUE(auth.Allows(Header("alice:secret").c_str()));  // from the cache
  EXPECT_FALSE(auth.Allows(Header("alice:secreT").c_str()));
  EXPECT_FALSE(auth.Allows(Header("alice:secret ").c_str()));
  EXPECT_FALSE(auth.Allows(Header("alice:").c_str()));
  EXPECT_FALSE(auth.Allows(Header("bob:secret").c_str()));
  EXPECT_FALSE(auth.Allows(Header("alicesecret").c_str()));
  EXPECT_FALSE(auth.Allows(""));  // no Authorization header
  EXPECT_FALSE(auth.Allows("Bearer abc"));
  EXPECT_FALSE(auth.Allows("Basic !!!!"));
  EXPECT_FALSE(auth.Allows("Basic YWxpY2U6c2VjcmV0="));  // bad padding
  EXPECT_FALSE(BasicAuth(std::map<std::string, std::string>{}).enabled());
}

TEST(BasicAuth, DecodesBase64) {
  std::string out;
  EXPECT_TRUE(DecodeBase64("YWxpY2U6c2VjcmV0", out));
  EXPECT_EQ(out, "alice:secret");
  EXPECT_TRUE(DecodeBase64("YQ==", out));
  EXPECT_EQ(out, "a");
  EXPECT_FALSE(DecodeBase64("YQ=a", out));
  EXPECT_FALSE(DecodeBase64("Y===", out));
  EXPECT_FALSE(DecodeBase64("YQ", out));
}

// Building the context reads the files: each problem names the key and the path.
TEST(MakeTlsContext, NamesTheKeyAndPathOfABadFile) {
  const std::string missing = "/nonexistent/numaprobe-test.pem";
  const std::string not_pem = std::string(NUMAPROBE_FIXTURES) + "/metrics.golden";
  WebConfig::Tls tls;
  tls.cert_file = missing;
  tls.key_file = missing;
  const auto Problem = [&] {
    auto context = MakeTlsContext(tls);
    return context.ok() ? std::string() : context.failure().reason;
  };
  EXPECT_EQ(Problem(), "tls_server_config.cert_file: cannot read " + missing + ": No such file or directory");
  tls.cert_file = not_pem;
  EXPECT_THAT(Problem(), HasSubstr("tls_server_config.cert_file: " + not_pem + ": not a PEM certificate"));
}

}  // namespace
}  // namespace numaprobe::daemon
