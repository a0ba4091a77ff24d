// SPDX-License-Identifier: Apache-2.0
// Unit tests for daemon/config/web_config.cc (the --web.config.file parser),
// daemon/web/web_security.cc (basic auth) and the file checks of
// daemon/web/tls_options.cc (serving TLS: tests/integration/test_web_tls.py).
#include "daemon/config/web_config.h"
#include "daemon/web/tls_options.h"
#include "daemon/web/web_security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
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

// The exporter-toolkit takes any bcrypt cost to 31; each step doubles a
// check's work, and one request at 31 would hold the password checker for
// days: refused when the file is read, naming the limit.
TEST(WebConfig, BcryptCostAboveTheLimitIsRefused) {
  const std::string cost31 = "$2y$31$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O";
  EXPECT_EQ(FirstError("basic_auth_users:\n  alice: " + cost31 + "\n"),
            "line 2: basic_auth_users.alice: bcrypt cost 31 is above the limit of 12 (each check of a password would "
            "hold the server's password checker for seconds); hash it again with `htpasswd -nBC 10 user`");
  EXPECT_THAT(FirstError("basic_auth_users:\n  alice: $2y$13$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O\n"),
              HasSubstr("bcrypt cost 13 is above the limit of 12"));
  EXPECT_EQ(ParsedWeb("basic_auth_users:\n  alice: $2y$12$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O\n")
                .basic_auth_users.size(),
            1u);
  EXPECT_EQ(BcryptCost(kSecretHash), 10);
  EXPECT_EQ(BcryptCost("$2y$32$hFK6PvyFYnsvHPQV7uD2XOkbRo8TTVBwwD3IaUYxwnu4XEcnZxv3O"), 0);
}

// yaml-cpp keeps both entries of a repeated key, and the last one used to
// win silently.
TEST(WebConfig, AUserListedTwiceIsRefused) {
  EXPECT_EQ(FirstError(std::string("basic_auth_users:\n  alice: ") + kSecretHash + "\n  bob: " + kSecretHash +
                       "\n  alice: " + kSecretHash + "\n"),
            "line 4: basic_auth_users.alice: user listed twice (first on line 2)");
}

TEST(WebConfig, NestingAndSizeLimitsAreNamed) {
  EXPECT_EQ(FirstError("a: " + std::string(100, '[') + std::string(100, ']') + "\n"),
            "line 1: lists and mappings nested deeper than the limit of 64 levels");
  std::string many = "basic_auth_users: [";
  for (int i = 0; i < 40000; ++i) many += "1,";
  many += "1]\n";
  EXPECT_THAT(FirstError(many), HasSubstr("more than 32768 YAML nodes (values, lists and mappings), the limit"));
}

// crypt(3) reads a C string: "secret\0anything" was checked as "secret".
TEST(BasicAuth, APasswordHoldingANulByteIsRefused) {
  const BasicAuth auth(std::map<std::string, std::string>{{"alice", kSecretHash}});
  EXPECT_TRUE(auth.Allows(Header("alice:secret").c_str()));
  EXPECT_FALSE(auth.Allows(Header(std::string("alice:secret\0anything", 21)).c_str()));
  EXPECT_FALSE(auth.Allows(Header(std::string("alice:secret\0", 13)).c_str()));
}

// Unknown users are checked against a dummy hash of the users' own cost
// (the highest, when they differ), not a fixed cost 10: a cost-12 user no
// longer answers four times slower than a name that does not exist.
TEST(BasicAuth, TheDummyHashHasTheUsersCost) {
  const std::string cost4 = "$2y$04$vtz66eFXt7WfQ.xZnb./Oe7KXe2fyup8JrGPdoFOteBnS36QVdY9i";
  const BasicAuth four(std::map<std::string, std::string>{{"alice", cost4}});
  EXPECT_EQ(BcryptCost(four.dummy_hash()), 4);
  const BasicAuth ten(std::map<std::string, std::string>{{"alice", kSecretHash}, {"bob", cost4}});
  EXPECT_EQ(BcryptCost(ten.dummy_hash()), 10);
  // Fresh salt each time: no precomputed table matches it.
  EXPECT_NE(BasicAuth(std::map<std::string, std::string>{{"alice", kSecretHash}}).dummy_hash(),
            BasicAuth(std::map<std::string, std::string>{{"alice", kSecretHash}}).dummy_hash());
  // The unknown user's check runs bcrypt in full: it takes as long as a
  // known user's wrong password, within a factor that timer noise allows.
  const auto seconds = [&](const std::string& credentials) {
    PasswordCheck check;
    EXPECT_EQ(four.Screen(Header(credentials), check), BasicAuth::Screening::kNeedsCheck);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(check.Run());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double known = seconds("alice:wrong");
  const double unknown = seconds("mallory:wrong");
  EXPECT_GT(unknown, known / 3) << known << " " << unknown;
  EXPECT_LT(unknown, known * 3) << known << " " << unknown;
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
